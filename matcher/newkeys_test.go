package matcher_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/matcher"
	"reconcile/matcher/memory"
)

// The rules of money that moved twice under new keys (8 to 11), each with
// its near misses. A night is what one run sees: tonight's rows, and the
// local tables whole, of which it is handed what the ledger would hand
// it.

// when is a time in Shanghai: "2026-11-28 09:00:00.000".
func when(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.000", s, shanghai)
	if err != nil {
		panic(err)
	}
	return t
}

type night struct {
	date    string
	opts    matcher.Options
	rows    []reconcile.Transaction
	orders  []reconcile.LocalRecord // every order of the local tables
	refunds []reconcile.LocalRecord // every refund, whatever its date
	earlier []reconcile.Transaction // refund rows of earlier nights that no local record confirmed
	// what earlier nights told: an over_refund's total, suspected refunds
	reported  int64
	suspected []string
	// remembered are the rows of the night before, as its memory keeps them
	remembered []reconcile.Transaction
	// events are the dispute events and refund reversals of earlier
	// nights' files, as the ledger keeps them (rule 14)
	events []reconcile.Transaction
	// the merchant's records of disputes, where it keeps them
	recorded map[string]reconcile.Dispute
	overdue  []reconcile.Dispute
}

// classify classifies the night as a run does, and checks that a run
// streaming the day's window beside the file finds the same.
func (n night) classify(t *testing.T) matcher.Classification {
	t.Helper()
	c := n.classifyAs(t, false)
	if inter := n.classifyAs(t, true); !reflect.DeepEqual(inter, c) {
		t.Errorf("the window streamed beside the file: got %+v, want what one after the other gives, %+v", inter, c)
	}
	return c
}

// classifyAs classifies the night, with the day's window of local
// records read after the file, or beside it (interleaved: the window's
// records first, a row between each, then the rest of the rows).
func (n night) classifyAs(t *testing.T, interleaved bool) matcher.Classification {
	t.Helper()
	d, err := reconcile.NewBusinessDay(n.date, shanghai)
	if err != nil {
		t.Fatal(err)
	}
	m := matcher.New(d, n.opts)
	var window []reconcile.LocalRecord
	for _, rec := range append(slices.Clone(n.orders), n.refunds...) {
		if d.Contains(rec.SettledAt) {
			window = append(window, rec)
		}
	}
	keys := map[string]bool{}
	rows := n.rows
	if interleaved {
		m.Interleave()
		for _, rec := range window {
			m.AddLocal(rec)
			if len(rows) > 0 {
				m.AddRow(rows[0])
				keys[string(rows[0].Kind)+rows[0].Key()] = true
				rows = rows[1:]
			}
		}
	}
	for _, r := range rows {
		m.AddRow(r)
		keys[string(r.Kind)+r.Key()] = true
	}
	if n.remembered != nil {
		m.Nights().Hash()
	}
	// Refund rows without our number, linked by the channel's refund id.
	ids := m.UnkeyedRefunds()
	var linked []reconcile.LocalRecord
	for _, r := range n.refunds {
		if slices.Contains(ids, r.ChannelTxnID) {
			linked = append(linked, r)
		}
	}
	m.ResolveRefunds(linked)
	// Dispute events without an order, placed by the payment's id.
	var owners []reconcile.LocalRecord
	for _, o := range n.orders {
		if slices.Contains(m.UnplacedDisputes(), o.ChannelTxnID) {
			owners = append(owners, o)
		}
	}
	m.PlaceDisputes(owners)
	for _, r := range n.rows {
		if r.Kind == reconcile.KindRefund && r.RefundNo == "" {
			for _, l := range linked {
				if l.ChannelTxnID == r.RefundID() {
					keys[string(r.Kind)+l.RefundNo] = true
				}
			}
		}
	}
	// The day's window, and the records of tonight's keys.
	if interleaved {
		m.RowsDone()
	}
	for _, rec := range append(slices.Clone(n.orders), n.refunds...) {
		if !interleaved && d.Contains(rec.SettledAt) || !d.Contains(rec.SettledAt) && keys[string(rec.Kind)+rec.Key()] {
			m.AddLocal(rec)
		}
	}
	q := m.Questions()
	known := matcher.Known{OrderRefunds: n.answerRefunds(q, d)}
	known.Disputes, known.Disputed = n.answerDisputes(q)
	known.Recorded, known.Overdue = n.recorded, n.overdue
	// A customer's orders settled on earlier nights near tonight's early
	// ones, as the ledger finds them.
	if n.remembered != nil {
		if err := m.Nights().Add(d.Start().AddDate(0, 0, -1), memory.Blob(memory.Encode(n.remembered))); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range q.EarlyOrders {
		for _, o := range n.orders {
			apart := o.CreatedAt.Sub(e.CreatedAt).Abs()
			if o.HasCustomer && o.Customer == e.Customer && o.OrderNo != e.OrderNo && apart <= n.opts.PaymentWindow &&
				o.Settled() && o.SettledAt.Before(d.Start().Add(n.opts.Grace)) {
				known.EarlierOrders = append(known.EarlierOrders, o)
			}
		}
	}
	return m.Classify(known)
}

// answerRefunds is what the ledger knows of the orders a refund touches,
// as DayOrderRefunds and OrderRefunds answer: for the orders of the day's
// refunds with more than one refund or a row an earlier night's file
// alone knew, and for those it is asked about.
func (n night) answerRefunds(q matcher.Questions, d reconcile.BusinessDay) []reconcile.OrderRefunds {
	var out []reconcile.OrderRefunds
	touched := map[string]bool{}
	for _, o := range q.RefundOrders {
		touched[o] = true
	}
	refunds := map[string]int{}
	for _, r := range n.refunds {
		refunds[r.OrderNo]++
	}
	for _, r := range n.refunds {
		earlier := func(e reconcile.Transaction) bool { return e.OrderNo == r.OrderNo }
		if d.Contains(r.SettledAt) && (refunds[r.OrderNo] > 1 || slices.ContainsFunc(n.earlier, earlier) ||
			slices.ContainsFunc(n.events, earlier)) {
			touched[r.OrderNo] = true
		}
	}
	for _, o := range n.orders {
		if !touched[o.OrderNo] {
			continue
		}
		or := reconcile.OrderRefunds{Order: o, Reported: n.reported, Suspected: n.suspected}
		for _, r := range n.refunds {
			if r.OrderNo == o.OrderNo {
				or.Refunds = append(or.Refunds, r)
			}
		}
		for _, r := range n.earlier {
			if r.OrderNo == o.OrderNo {
				or.Earlier = append(or.Earlier, r)
			}
		}
		for _, e := range n.events {
			if e.OrderNo == o.OrderNo {
				or.Disputes = append(or.Disputes, e)
			}
		}
		out = append(out, or)
	}
	return out
}

// answerDisputes is what the ledger knows of tonight's disputes: their
// earlier events, and the orders whose chargebacks of earlier nights
// still stand.
func (n night) answerDisputes(q matcher.Questions) ([]reconcile.Transaction, map[string]string) {
	var events []reconcile.Transaction
	standing := map[string]int64{}
	disputeOf := map[string]string{}
	for _, e := range n.events {
		if slices.Contains(q.Disputes, e.DisputeID) {
			events = append(events, e)
		}
		switch e.Kind {
		case reconcile.KindChargeback, reconcile.KindSecondChargeback:
			standing[e.OrderNo] += e.Amount
			disputeOf[e.OrderNo] = e.DisputeID
		case reconcile.KindChargebackReversal:
			standing[e.OrderNo] -= e.Amount
		}
	}
	disputed := map[string]string{}
	for o, v := range standing {
		if v > 0 && o != "" {
			disputed[o] = disputeOf[o]
		}
	}
	return events, disputed
}

func paidOrder(no string, amount int64, paid string) reconcile.LocalRecord {
	return reconcile.LocalRecord{Kind: reconcile.KindPayment, OrderNo: no, Amount: amount, Currency: "CNY",
		Status: reconcile.OrderPaid, SettledAt: when(paid), CreatedAt: when(paid).Add(-time.Second), ChannelTxnID: "T" + no}
}

func customerOrder(no string, customer, amount int64, created string) reconcile.LocalRecord {
	o := paidOrder(no, amount, created)
	o.CreatedAt, o.SettledAt = when(created), when(created).Add(2*time.Second)
	o.Customer, o.HasCustomer = customer, true
	return o
}

func paidRefund(order, no string, amount int64, at string) reconcile.LocalRecord {
	return reconcile.LocalRecord{Kind: reconcile.KindRefund, OrderNo: order, RefundNo: no, Amount: amount, Currency: "CNY",
		Status: reconcile.RefundSucceeded, SettledAt: when(at), ChannelTxnID: "RT" + no}
}

// rowOf is the channel's row of a local record.
func rowOf(rec reconcile.LocalRecord) reconcile.Transaction {
	return reconcile.Transaction{Kind: rec.Kind, OrderNo: rec.OrderNo, RefundNo: rec.RefundNo, ChannelTxnID: rec.ChannelTxnID,
		Amount: rec.Amount, Currency: rec.Currency, OccurredAt: rec.SettledAt, Status: reconcile.StatusSuccess}
}

func rowsOf(recs ...reconcile.LocalRecord) []reconcile.Transaction {
	var out []reconcile.Transaction
	for _, r := range recs {
		out = append(out, rowOf(r))
	}
	return out
}

var windows = matcher.Options{RefundWindow: 24 * time.Hour, PaymentWindow: 10 * time.Minute}

func TestNewKeys(t *testing.T) {
	xk1 := paidOrder("XK1", 10000, "2026-11-27 20:00:00.000")
	r30 := paidRefund("XK1", "XR1", 3000, "2026-11-28 10:00:00.000")
	r70 := paidRefund("XK1", "XR2", 7000, "2026-11-28 11:00:00.000")
	r50a := paidRefund("XK1", "XR1", 5000, "2026-11-28 10:00:00.000")
	r50b := paidRefund("XK1", "XR2", 5000, "2026-11-28 15:00:00.000")
	r100a := paidRefund("XK1", "XR1", 10000, "2026-11-28 10:00:00.000")
	r100b := paidRefund("XK1", "XR2", 10000, "2026-11-28 10:05:00.000")
	yesterday100 := paidRefund("XK1", "XR1", 10000, "2026-11-27 21:00:00.000")
	tomorrow100 := paidRefund("XK1", "XR2", 10000, "2026-11-29 09:00:00.000")
	usd := paidRefund("XK1", "XR2", 10000, "2026-11-28 10:05:00.000")
	usd.Currency = "USD"
	late50 := paidRefund("XK1", "XR2", 5000, "2026-11-29 11:00:00.000") // 25 h after r50a
	third := paidRefund("XK1", "XR3", 10000, "2026-11-29 09:00:00.000")
	afterMidnight100 := paidRefund("XK1", "XR2", 10000, "2026-11-29 00:00:01.000") // its row was in the 28th's file
	// 60 + 70 of 100 told on the 28th; then our 70 failed, and a new 70
	// settled on the 29th: 130 of 100 again.
	r60 := paidRefund("XK1", "XR1", 6000, "2026-11-28 10:00:00.000")
	r70failed := paidRefund("XK1", "XR2", 7000, "2026-11-28 11:00:00.000")
	r70failed.Status = reconcile.RefundFailed
	r70new := paidRefund("XK1", "XR4", 7000, "2026-11-29 09:00:00.000")
	usdYesterday := paidRefund("XK1", "XR2", 10000, "2026-11-27 22:00:00.000")
	usdYesterday.Currency = "USD"
	r100today := paidRefund("XK1", "XR3", 10000, "2026-11-28 10:00:00.000")

	xk2 := customerOrder("XK2", 9, 5000, "2026-11-28 12:00:00.000")
	xk3 := customerOrder("XK3", 9, 5000, "2026-11-28 12:00:00.040")
	xk3late := customerOrder("XK3", 9, 5000, "2026-11-28 12:11:00.000")
	xk3usd := customerOrder("XK3", 9, 5000, "2026-11-28 12:00:00.040")
	xk3usd.Currency = "USD"
	other := customerOrder("XK3", 10, 5000, "2026-11-28 12:00:00.040")
	noCustomer := func(o reconcile.LocalRecord) reconcile.LocalRecord { o.HasCustomer, o.Customer = false, 0; return o }
	beforeMidnight := customerOrder("XK2", 9, 5000, "2026-11-28 23:59:58.000")
	afterMidnight := customerOrder("XK3", 9, 5000, "2026-11-29 00:00:01.000")
	beforeMidnight.SettledAt = when("2026-11-28 23:59:59.000")
	// Its row in the 28th's file, our record of it written just after
	// midnight.
	paidAfterMidnight := beforeMidnight
	paidAfterMidnight.SettledAt = when("2026-11-29 00:00:00.500")
	withGrace := windows
	withGrace.Grace = 30 * time.Minute

	unnumbered := func(tx reconcile.Transaction) reconcile.Transaction { tx.RefundNo = ""; return tx }
	// A refund the channel closed, that our records say failed: counted by
	// neither side, and different numbers from the ones above.
	failedRefund := func(r reconcile.LocalRecord) reconcile.LocalRecord {
		r.RefundNo, r.ChannelTxnID, r.Status = "XR3", "RTXR3", reconcile.RefundFailed
		return r
	}
	failedRow := func(r reconcile.LocalRecord) reconcile.Transaction {
		tx := rowOf(failedRefund(r))
		tx.Status = reconcile.StatusFailed
		return tx
	}
	tests := []struct {
		name  string
		night night
		want  []brief // every finding, in report order
		hint  string  // a phrase of the first finding's hint
		// a phrase of a line of the first finding's Related column
		related string
	}{
		{
			name: "30 + 70 of 100",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r30, r70),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r30, r70}},
		},
		{
			name: "50 + 50 of 100 within the window",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r50a, r50b),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r50a, r50b}},
			want: []brief{{reconcile.SuspectedDuplicateRefund, "RTXR2XR2", false}},
			hint: "Refund XR2 of order XK1 (50.00 CNY) settled 5h0m0s after refund XR1",
		},
		{
			name: "50 + 50 of 100, 25 hours apart",
			night: night{date: "2026-11-29", opts: windows, rows: rowsOf(late50),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r50a, late50}},
		},
		{
			name: "50 + 50 with the refund window off",
			night: night{date: "2026-11-28", opts: matcher.Options{PaymentWindow: 10 * time.Minute}, rows: rowsOf(r50a, r50b),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r50a, r50b}},
		},
		{
			name: "100 + 100 of 100 is over, not suspected",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100a, r100b),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r100a, r100b}},
			want: []brief{{reconcile.OverRefund, "RTXR2XR2", false}},
			hint: "Order XK1 was paid 100.00 CNY and has been refunded 200.00 CNY in 2 refunds: 100.00 CNY more than was paid",
		},
		{
			name: "100 + 100, the second refund the channel's alone",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100a, r100b),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r100a}},
			want: []brief{{reconcile.MissingLocal, "RTXR2XR2", false}, {reconcile.OverRefund, "RTXR2XR2", false}},
		},
		{
			name: "100 + 100, the first refund remembered from an earlier night, ours unknown",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100b),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r100b}, earlier: rowsOf(yesterday100)},
			want: []brief{{reconcile.OverRefund, "RTXR2XR2", false}},
		},
		{
			name: "the first night of a second refund on the next: nothing yet",
			night: night{date: "2026-11-27", opts: windows, rows: rowsOf(xk1, yesterday100),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{yesterday100}},
		},
		{
			name: "the second refund on the next night: over, found by D+1",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100b),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{yesterday100, r100b}},
			want: []brief{{reconcile.OverRefund, "RTXR2XR2", false}},
		},
		{
			name: "the night after the crossing, nothing more refunded: not told again",
			night: night{date: "2026-11-29", opts: windows, rows: []reconcile.Transaction{failedRow(tomorrow100)},
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{yesterday100, r100b, failedRefund(tomorrow100)},
				reported: 20000},
		},
		{
			name: "the night after the crossing, a third refund: told again, with the new total",
			night: night{date: "2026-11-29", opts: windows, rows: rowsOf(third),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{yesterday100, r100b, third},
				reported: 20000},
			want: []brief{{reconcile.OverRefund, "RTXR3XR3", false}},
			hint: "refunded 300.00 CNY in 3 refunds",
		},
		{
			name: "our record of the crossing refund dated after midnight: not told again the next night",
			night: night{date: "2026-11-29", opts: windows,
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{yesterday100, afterMidnight100},
				reported: 20000, remembered: []reconcile.Transaction{rowOf(paidRefund("XK1", "XR2", 10000, "2026-11-28 23:59:59.000"))}},
		},
		{
			name: "a refund new tonight takes a told order over again: told, naming it",
			night: night{date: "2026-11-29", opts: windows, rows: rowsOf(r70new),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r60, r70failed, r70new},
				reported: 13000},
			want: []brief{{reconcile.OverRefund, "RTXR4XR4", false}},
			hint: "Refund XR4 took it past the order's amount",
		},
		{
			name: "the same over-refunded order the night after, nothing new: not told again",
			night: night{date: "2026-11-30", opts: windows,
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r60, r70failed, r70new},
				reported: 13000, earlier: rowsOf(r70new)},
		},
		{
			name: "a refund in another currency told on an earlier night: not told again",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100a),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{usdYesterday, r100a}},
		},
		{
			name: "over in the order's currency, a refund in another listed beside",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100a, r100today),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{usdYesterday, r100a, r100today}},
			want:    []brief{{reconcile.OverRefund, "RTXR3XR3", false}},
			hint:    "refunded 200.00 CNY in 2 refunds",
			related: "refund XR2, channel id RTXR2, 100.00 USD, 2026-11-27 22:00:00, our records only, not added: another currency",
		},
		{
			name: "a suspected refund told on an earlier night: not told again",
			night: night{date: "2026-11-29", opts: windows, rows: []reconcile.Transaction{failedRow(late50)},
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r50a, r50b, failedRefund(late50)},
				suspected: []string{"XR2"}},
		},
		{
			name: "a refund our records date after tonight is that night's",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100a),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r100a, tomorrow100}},
		},
		{
			name: "a refund in another currency is not added to the order's, and is told",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100a, usd),
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r100a, usd}},
			want: []brief{{reconcile.RefundCurrencyMismatch, "RTXR2XR2", false}},
			hint: "the order was paid in CNY",
		},
		{
			name:  "a refund of an order we have no record of is missing_local, as before",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(r100a, r100b)},
			want:  []brief{{reconcile.MissingLocal, "RTXR1XR1", false}, {reconcile.MissingLocal, "RTXR2XR2", false}},
		},
		{
			name: "two partial refunds without our numbers, linked by the channel's ids",
			night: night{date: "2026-11-28", opts: windows, rows: []reconcile.Transaction{unnumbered(rowOf(r30)), unnumbered(rowOf(r70))},
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r30, r70}},
		},
		{
			name: "a refund nothing links is reported, and counted in its order's refunds",
			night: night{date: "2026-11-28", opts: windows, rows: []reconcile.Transaction{rowOf(r100a), unnumbered(rowOf(r100b))},
				orders: []reconcile.LocalRecord{xk1}, refunds: []reconcile.LocalRecord{r100a}},
			want: []brief{{reconcile.OverRefund, "RTXR2", false}, {reconcile.Unrecognized, "RTXR2", false}},
			hint: "refunded 200.00 CNY in 2 refunds",
		},
		{
			name: "the same customer pays twice, 40 ms apart",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(xk2, xk3),
				orders: []reconcile.LocalRecord{xk2, xk3}},
			want: []brief{{reconcile.SuspectedDuplicatePayment, "TXK3XK3", false}},
			hint: "Customer 9 paid 50.00 CNY twice, 2 orders 40 ms apart: XK2 and then XK3",
		},
		{
			name: "the same customer and amount, 11 minutes apart",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(xk2, xk3late),
				orders: []reconcile.LocalRecord{xk2, xk3late}},
		},
		{
			name: "the same customer and amount in another currency",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(xk2, xk3usd),
				orders: []reconcile.LocalRecord{xk2, xk3usd}},
		},
		{
			name: "two customers",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(xk2, other),
				orders: []reconcile.LocalRecord{xk2, other}},
		},
		{
			name: "no customer column: the check is off",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(noCustomer(xk2), noCustomer(xk3)),
				orders: []reconcile.LocalRecord{noCustomer(xk2), noCustomer(xk3)}},
		},
		{
			name: "the payment window off",
			night: night{date: "2026-11-28", opts: matcher.Options{RefundWindow: time.Hour}, rows: rowsOf(xk2, xk3),
				orders: []reconcile.LocalRecord{xk2, xk3}},
		},
		{
			name: "one order not settled by the channel",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(xk2),
				orders: []reconcile.LocalRecord{xk2, xk3}},
			want: []brief{{reconcile.MissingChannel, "XK3", false}},
		},
		{
			name: "across midnight, the night before: nothing yet",
			night: night{date: "2026-11-28", opts: windows, rows: rowsOf(beforeMidnight),
				orders: []reconcile.LocalRecord{beforeMidnight}},
		},
		{
			name: "across midnight: D+1's run finds it",
			night: night{date: "2026-11-29", opts: windows, rows: rowsOf(afterMidnight),
				orders: []reconcile.LocalRecord{beforeMidnight, afterMidnight}},
			want: []brief{{reconcile.SuspectedDuplicatePayment, "TXK3XK3", false}},
			hint: "2 orders 3 s apart",
		},
	}
	tests = append(tests, struct {
		name    string
		night   night
		want    []brief
		hint    string
		related string
	}{
		name: "across midnight, our record of the earlier order after midnight: D+1's run finds it",
		night: night{date: "2026-11-29", opts: withGrace, rows: rowsOf(afterMidnight),
			orders: []reconcile.LocalRecord{paidAfterMidnight, afterMidnight}, remembered: rowsOf(beforeMidnight)},
		want: []brief{{reconcile.SuspectedDuplicatePayment, "TXK3XK3", false}},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.night.classify(t)
			if got := briefs(res.Findings); !slices.Equal(got, tt.want) {
				t.Fatalf("findings = %v, want %v", got, tt.want)
			}
			if tt.hint != "" && !strings.Contains(res.Findings[0].Hint, tt.hint) {
				t.Errorf("hint = %q, want it to contain %q", res.Findings[0].Hint, tt.hint)
			}
			if tt.related != "" && !slices.ContainsFunc(res.Findings[0].Related, func(l string) bool { return strings.Contains(l, tt.related) }) {
				t.Errorf("related = %q, want a line containing %q", res.Findings[0].Related, tt.related)
			}
			for _, f := range res.Findings {
				if f.AutoReverse {
					t.Errorf("%s was made automatic", f.Category)
				}
			}
		})
	}
}

func TestFees(t *testing.T) {
	contract := func(tolerance int64) *reconcile.FeeContract {
		return &reconcile.FeeContract{
			Payment:   &reconcile.FeeTerms{RateNano: 6_000_000, Rounding: reconcile.RoundHalfUp, Places: -1},
			Refund:    &reconcile.FeeTerms{ReturnsShare: true},
			Tolerance: tolerance,
		}
	}
	withFee := func(tx reconcile.Transaction, milli int64, rate string) reconcile.Transaction {
		tx.FeeMilli, tx.FeeRate = milli, rate
		return tx
	}
	o := paidOrder("F1", 10000, "2026-11-28 09:00:00.000")
	r := paidRefund("F1", "FR1", 5000, "2026-11-28 10:00:00.000")
	tests := []struct {
		name      string
		contract  *reconcile.FeeContract
		rows      []reconcile.Transaction
		want      []brief
		hint      string
		charged   int64
		expected  int64
		checkRows int
	}{
		{
			name:     "as the contract says",
			contract: contract(0),
			rows:     []reconcile.Transaction{withFee(rowOf(o), 60_000, "0.60%"), withFee(rowOf(r), -30_000, "")},
			charged:  30_000, expected: 30_000, checkRows: 2,
		},
		{
			name:     "one minor unit off, tolerance 0",
			contract: contract(0),
			rows:     []reconcile.Transaction{withFee(rowOf(o), 61_000, "0.61%"), withFee(rowOf(r), -30_000, "")},
			want:     []brief{{reconcile.FeeMismatch, "TF1F1", false}},
			hint:     `fee of 0.61000 CNY on the payment for order F1 (100.00 CNY) (the file says its rate is "0.61%"); the contract (rate 0.006) says 0.60000 CNY: 0.01000 CNY apart`,
			charged:  31_000, expected: 30_000, checkRows: 2,
		},
		{
			name:     "one minor unit off, tolerance 1",
			contract: contract(1),
			rows:     []reconcile.Transaction{withFee(rowOf(o), 61_000, ""), withFee(rowOf(r), -30_000, "")},
			charged:  31_000, expected: 30_000, checkRows: 2,
		},
		{
			name:     "a refund that did not give its share back",
			contract: contract(0),
			rows:     []reconcile.Transaction{withFee(rowOf(o), 60_000, ""), withFee(rowOf(r), 0, "")},
			want:     []brief{{reconcile.FeeMismatch, "RTFR1FR1", false}},
			charged:  60_000, expected: 30_000, checkRows: 2,
		},
		{
			name:    "no contract: no check, the fees still summed",
			rows:    []reconcile.Transaction{withFee(rowOf(o), 99_000, ""), withFee(rowOf(r), 0, "")},
			charged: 99_000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := windows
			opts.Fees = tt.contract
			res := night{date: "2026-11-28", opts: opts, rows: tt.rows,
				orders: []reconcile.LocalRecord{o}, refunds: []reconcile.LocalRecord{r}}.classify(t)
			if got := briefs(res.Findings); !slices.Equal(got, tt.want) {
				t.Fatalf("findings = %v, want %v", got, tt.want)
			}
			if tt.hint != "" && !strings.Contains(res.Findings[0].Hint, tt.hint) {
				t.Errorf("hint = %q, want it to contain %q", res.Findings[0].Hint, tt.hint)
			}
			if len(res.Fees) != 1 {
				t.Fatalf("fees = %+v, want one currency", res.Fees)
			}
			got := res.Fees[0]
			if got.Charged != tt.charged || got.Expected != tt.expected || got.Checked != tt.checkRows || got.Rows != 2 {
				t.Errorf("fees = %+v, want charged %d, expected %d over %d of 2 rows", got, tt.charged, tt.expected, tt.checkRows)
			}
			for _, f := range res.Findings {
				if f.AtRisk() != 1 && f.FeeMilli-f.ExpectedFeeMilli == 1000 {
					t.Errorf("at risk %d, want 1", f.AtRisk())
				}
			}
		})
	}
}

// TestInterleavedOrderSettledByALaterRow: streamed beside the file, an
// order's record can attach while only a row saying the payment is still
// processing is in; the row that says it settled comes later. Rule 10
// looks at it all the same once the rows are all in.
func TestInterleavedOrderSettledByALaterRow(t *testing.T) {
	xk2 := customerOrder("XK2", 9, 5000, "2026-11-28 12:00:00.000")
	xk3 := customerOrder("XK3", 9, 5000, "2026-11-28 12:00:00.040")
	processing := rowOf(xk2)
	processing.Status, processing.ChannelTxnID = reconcile.StatusProcessing, "T-first"
	d, err := reconcile.NewBusinessDay("2026-11-28", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	classify := func(interleaved bool) []string {
		m := matcher.New(d, windows)
		rows := []reconcile.Transaction{processing, rowOf(xk2), rowOf(xk3)}
		if interleaved {
			m.Interleave()
			m.AddRow(rows[0])
			m.AddLocal(xk2) // only the processing row is in
			m.AddLocal(xk3) // no row yet: held
			m.AddRow(rows[1])
			m.AddRow(rows[2])
			m.RowsDone()
		} else {
			for _, r := range rows {
				m.AddRow(r)
			}
			m.AddLocal(xk2)
			m.AddLocal(xk3)
		}
		var got []string
		for _, f := range m.Classify(matcher.Known{}).Findings {
			got = append(got, string(f.Category)+" "+f.Key())
		}
		return got
	}
	want := classify(false)
	if !slices.Contains(want, "suspected_duplicate_payment XK3") {
		t.Fatalf("one after the other: got %q, want a suspected_duplicate_payment of XK3", want)
	}
	if got := classify(true); !slices.Equal(got, want) {
		t.Errorf("interleaved: got %q, want %q", got, want)
	}
}
