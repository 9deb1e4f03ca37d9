package reconcile_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"reconcile"
)

// TestEventLogGivesBackWhatWasPacked: every field of every event comes
// back as it went in, the time at the same instant and zone offset,
// whatever the text (empty, long, not ASCII) and the numbers (either
// end of int64).
func TestEventLogGivesBackWhatWasPacked(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	events := []reconcile.Transaction{
		{Kind: reconcile.KindChargeback, OrderNo: "ORD1", ChannelTxnID: "txn_1", Amount: 4999, Currency: "USD",
			OccurredAt: time.Date(2026, 11, 28, 9, 30, 0, 123456789, time.UTC), FeeMilli: 1500000,
			Status: reconcile.StatusSuccess, RawKind: "dispute", Line: 7, DisputeID: "dp_1", PaymentID: "pi_1", Reason: "fraudulent"},
		{Kind: reconcile.KindRefundReversal, OrderNo: "订单-2", RefundNo: "R2", ChannelRefundID: "re_2", Amount: math.MaxInt64,
			Currency: "CNY", OccurredAt: time.Date(2026, 11, 28, 23, 59, 59, 0, shanghai), FeeMilli: math.MinInt64,
			FeeRate: "0.60%", Status: reconcile.StatusFailed, RawKind: "RefundedReversed", Line: math.MaxInt32},
		{Kind: reconcile.KindSecondChargeback, Reason: strings.Repeat("r", 300)}, // a zero time, a long text
	}
	log := reconcile.PackEvents(events...)
	got := slices.Collect(log.All())
	if log.Len() != len(events) || len(got) != len(events) {
		t.Fatalf("Len %d, read %d; want %d", log.Len(), len(got), len(events))
	}
	for i, want := range events {
		g := got[i]
		if !g.OccurredAt.Equal(want.OccurredAt) || g.OccurredAt.IsZero() != want.OccurredAt.IsZero() {
			t.Errorf("event %d: time %v, want %v", i, g.OccurredAt, want.OccurredAt)
		}
		_, gotOff := g.OccurredAt.Zone()
		_, wantOff := want.OccurredAt.Zone()
		if gotOff != wantOff {
			t.Errorf("event %d: zone offset %d, want %d", i, gotOff, wantOff)
		}
		g.OccurredAt, want.OccurredAt = time.Time{}, time.Time{}
		if g != want {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, g, want)
		}
	}
}

// TestEventLogStopsWhenAsked: a reader that stops early reads no
// further, and an empty log yields nothing.
func TestEventLogStopsWhenAsked(t *testing.T) {
	log := reconcile.PackEvents(reconcile.Transaction{OrderNo: "A"}, reconcile.Transaction{OrderNo: "B"})
	var seen []string
	for tx := range log.All() {
		seen = append(seen, tx.OrderNo)
		break
	}
	if !slices.Equal(seen, []string{"A"}) {
		t.Errorf("read %v, want [A]", seen)
	}
	empty := reconcile.PackEvents()
	for tx := range empty.All() {
		t.Errorf("an empty log yielded %+v", tx)
	}
	if empty.Len() != 0 {
		t.Errorf("an empty log has Len %d", empty.Len())
	}
}

// TestEventLogIsItsLength: the log is allocated once, at its length but
// for a byte per time at the most (the peak of a night with many
// disputes is partly theirs).
func TestEventLogIsItsLength(t *testing.T) {
	events := make([]reconcile.Transaction, 1000)
	for i := range events {
		events[i] = reconcile.Transaction{Kind: reconcile.KindChargeback, OrderNo: "ORD2026112800000001",
			ChannelTxnID: "txn_3QhHkLJ2eZvKYlo21a2b3c4d", Amount: int64(i) * 1000, Currency: "USD",
			OccurredAt: time.Date(2026, 11, 28, 9, 0, i%60, 0, time.UTC), Status: reconcile.StatusSuccess,
			RawKind: "dispute", Line: i + 2, DisputeID: "dp_1QhHkLJ2eZvKYlo2", PaymentID: "pi_3QhHkLJ2eZvKYlo2"}
	}
	log := reconcile.PackEvents(events...)
	used, allocated := reconcile.EventLogSize(log)
	if allocated-used > len(events) {
		t.Errorf("the log of %d events allocated %d bytes for %d used", len(events), allocated, used)
	}
	if per := used / len(events); per > 160 {
		t.Errorf("an event packs into %d bytes, want at most 160", per)
	}
}

// TestEventLogAllocatesOnce: packing allocates the buffer alone, and
// reading allocates nothing per event (a night packs and reads one event
// per dispute).
func TestEventLogAllocatesOnce(t *testing.T) {
	events := make([]reconcile.Transaction, 100)
	for i := range events {
		events[i] = reconcile.Transaction{Kind: reconcile.KindChargeback, OrderNo: "ORD1", ChannelTxnID: "txn_1",
			Amount: int64(i), Currency: "USD", OccurredAt: time.Date(2026, 11, 28, 9, 0, i%60, 0, time.FixedZone("CST", 8*3600)),
			DisputeID: "dp_1", Reason: "fraudulent"}
	}
	if n := testing.AllocsPerRun(10, func() { reconcile.PackEvents(events...) }); n > 1 {
		t.Errorf("packing 100 events made %v allocations, want 1", n)
	}
	log := reconcile.PackEvents(events...)
	var sum int64
	if n := testing.AllocsPerRun(10, func() {
		for tx := range log.All() {
			sum += tx.Amount
		}
	}); n > 2 {
		t.Errorf("reading 100 events made %v allocations, want none per event", n)
	}
}
