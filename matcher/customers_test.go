package matcher

import (
	"fmt"
	"testing"
	"time"

	"reconcile"
)

// TestTonightsOrdersFew checks that rule 10's candidate list keeps every
// order that shares its customer, amount and currency with another, and
// few of the orders that are alone: a counter shared by chance in the
// first table lets about one order in eleven through at this load, which
// the second table must cut to a few in a hundred.
func TestTonightsOrdersFew(t *testing.T) {
	day, err := reconcile.NewBusinessDay("2026-11-28", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	const alone, pairs = 200_000, 50
	m := New(day, Options{PaymentWindow: 10 * time.Minute})
	at := day.Start().Add(time.Hour)
	var recs []reconcile.LocalRecord
	order := func(no string, customer, amount int64) {
		recs = append(recs, reconcile.LocalRecord{Kind: reconcile.KindPayment, OrderNo: no, Amount: amount, Currency: "CNY",
			Status: "PAID", ChannelTxnID: "T" + no, SettledAt: at, CreatedAt: at, Customer: customer, HasCustomer: true})
	}
	for i := range alone {
		order(fmt.Sprintf("A%d", i), int64(i), 1000+int64(i%7))
	}
	for i := range pairs {
		order(fmt.Sprintf("P%da", i), int64(alone+i), 5000)
		order(fmt.Sprintf("P%db", i), int64(alone+i), 5000)
	}
	for _, rec := range recs {
		m.AddRow(reconcile.Transaction{Kind: rec.Kind, OrderNo: rec.OrderNo, ChannelTxnID: rec.ChannelTxnID,
			Amount: rec.Amount, Currency: rec.Currency, OccurredAt: rec.SettledAt, Status: reconcile.StatusSuccess})
	}
	for _, rec := range recs {
		m.AddLocal(rec)
	}
	m.store.Flush()
	listed := map[int64]int{}
	for _, o := range m.tonightsOrders() {
		listed[o.customer]++
	}
	for i := range pairs {
		if c := int64(alone + i); listed[c] != 2 {
			t.Errorf("customer %d: %d of the two orders listed, want both", c, listed[c])
		}
	}
	lone := len(listed) - pairs
	t.Logf("%d of %d orders alone listed", lone, alone)
	if max := alone * 3 / 100; lone > max {
		t.Errorf("%d orders alone listed, want at most %d (3%%) of %d", lone, max, alone)
	}
}
