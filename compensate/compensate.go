// Package compensate decides the reversal journals for unambiguous
// duplicates. It is pure: ledger posts what it returns, in the same
// transaction that records the findings.
package compensate

import (
	"fmt"

	"reconcile"
)

// IdempotencyKey is the journal key of the reversal of one channel row.
// It depends only on the channel and the row's channel id, so however
// often and however concurrently the job runs, a row is reversed once.
func IdempotencyKey(channel, channelTxnID string) string {
	return "reversal/" + channel + "/" + channelTxnID
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
		if !f.AutoReverse {
			continue
		}
		what := "payment of order " + f.OrderNo
		if f.Kind == reconcile.KindRefund {
			what = "refund " + f.RefundNo + " of order " + f.OrderNo
		}
		out = append(out, reconcile.Journal{
			IdempotencyKey: IdempotencyKey(channel, f.ChannelTxnID),
			Kind:           reconcile.JournalKindReversal,
			Channel:        channel,
			OrderNo:        f.OrderNo,
			RefundNo:       f.RefundNo,
			ChannelTxnID:   f.ChannelTxnID,
			Currency:       f.Currency,
			Amount:         f.ChannelAmount,
			Memo: fmt.Sprintf("Reverse duplicate %s settled by %s as %s (original %s)",
				what, channel, f.ChannelTxnID, f.OriginalTxnID),
			Lines: Booked(channel, f).Reverse(),
		})
	}
	return out
}
