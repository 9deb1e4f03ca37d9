// Package compensate decides the reversal journals for unambiguous
// duplicates. It is pure: ledger posts what it returns, in the same
// transaction that records the findings.
package compensate

import (
	"fmt"
	"strconv"

	"reconcile"
)

// IdempotencyKey is the journal key of the reversal of the channel row a
// finding is about. It depends only on the channel and what identifies the
// row, so however often and however concurrently the job runs, a row is
// reversed once: "reversal/<channel>/<channel id>", or, for a row the file
// gave no channel id, "reversal-row/<channel>/<fingerprint>" (a key space
// of its own, so no channel id can ever take a fingerprint's key).
func IdempotencyKey(channel string, f reconcile.Finding) string {
	if f.ChannelTxnID != "" {
		return "reversal/" + channel + "/" + f.ChannelTxnID
	}
	return "reversal-row/" + channel + "/" + f.Fingerprint()
}

// ClearingAccount holds what the channel owes us.
func ClearingAccount(channel string) string { return "channel:" + channel + ":clearing" }

// Accounts on our side of a payment and of a refund.
const (
	CustomerPayments = "customers:payments"
	CustomerRefunds  = "customers:refunds"
)

// Booked returns the postings a settlement row stands for: a payment moves
// money from the customer into the channel's clearing account; a refund
// moves it back out.
func Booked(channel string, f reconcile.Finding) reconcile.Postings {
	clearing := ClearingAccount(channel)
	a, cur := f.ChannelAmount, f.Currency
	if f.Kind == reconcile.KindRefund {
		return reconcile.Postings{
			{Account: CustomerRefunds, Amount: a, Currency: cur},
			{Account: clearing, Amount: -a, Currency: cur},
		}
	}
	return reconcile.Postings{
		{Account: clearing, Amount: a, Currency: cur},
		{Account: CustomerPayments, Amount: -a, Currency: cur},
	}
}

// Plan returns one reversal journal per finding marked AutoReverse, in the
// findings' order. Findings that need review get nothing.
func Plan(channel string, findings []reconcile.Finding) []reconcile.Journal {
	var out []reconcile.Journal
	for _, f := range findings {
		if f.AutoReverse {
			out = append(out, reversal(channel, f))
		}
	}
	return out
}

// Approved returns the reversal journal of a duplicate a person approved:
// the same journal, under the same key, as an automatic reversal of the
// row would have been, so a row is never reversed twice whichever way it
// went. A suspected duplicate under a new key (the later refund or order)
// is reversed the same way. A finding of another category is refused.
func Approved(channel string, f reconcile.Finding) (reconcile.Journal, error) {
	if !f.Category.Reversible() {
		return reconcile.Journal{}, fmt.Errorf("finding %s is %s: only a duplicate is reversed", f.Ref, f.Category)
	}
	if !f.HasChannel {
		return reconcile.Journal{}, fmt.Errorf("finding %s has no channel row to reverse", f.Ref)
	}
	return reversal(channel, f), nil
}

// Decided returns the reversal journal a person's decision on f posts:
// an approved duplicate's or suspected duplicate's (Approved); none for
// any other decision or finding, nor for a suspected refund the channel's
// files have not carried yet (only our records know it: there is no row
// to reverse). An approved over_refund or fee_mismatch is recorded only.
func Decided(channel string, f reconcile.Finding, state reconcile.State) (*reconcile.Journal, error) {
	if state != reconcile.StateApproved || !f.Category.Reversible() {
		return nil, nil
	}
	if f.Category == reconcile.SuspectedDuplicateRefund && !f.HasChannel {
		return nil, nil
	}
	j, err := Approved(channel, f)
	if err != nil {
		return nil, err
	}
	return &j, nil
}

// reversal is the journal that undoes the duplicate row of f.
func reversal(channel string, f reconcile.Finding) reconcile.Journal {
	what := "payment of order " + f.OrderNo
	if f.Kind == reconcile.KindRefund {
		what = "refund " + f.RefundNo + " of order " + f.OrderNo
	}
	row := f.ChannelTxnID
	if row == "" {
		row = "a row without a channel id (line " + strconv.Itoa(f.Line) + ")"
	}
	return reconcile.Journal{
		IdempotencyKey: IdempotencyKey(channel, f),
		Kind:           reconcile.JournalKindReversal,
		Channel:        channel,
		OrderNo:        f.OrderNo,
		RefundNo:       f.RefundNo,
		ChannelTxnID:   f.ChannelTxnID,
		Row:            f.RowKey(),
		Currency:       f.Currency,
		Amount:         f.ChannelAmount,
		Memo: fmt.Sprintf("Reverse duplicate %s settled by %s as %s (original %s)",
			what, channel, row, original(f)),
		Lines: Booked(channel, f).Reverse(),
	}
}

// original names what a duplicate repeats: the original row's channel id;
// for a suspected duplicate under a new key, the other refund or order.
func original(f reconcile.Finding) string {
	switch f.Category {
	case reconcile.SuspectedDuplicateRefund, reconcile.SuspectedDuplicatePayment:
		if len(f.Related) > 0 {
			return f.Related[0]
		}
	}
	return f.OriginalTxnID
}
