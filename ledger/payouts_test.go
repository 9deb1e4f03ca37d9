package ledger_test

import (
	"context"
	"testing"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// completeRun completes a run of channel for date with the outcome o.
func completeRun(t *testing.T, db *ledger.DB, id, channel, date string, o ledger.Outcome) {
	t.Helper()
	day := mustDay(t, date)
	run := reconcile.Run{ID: id, Channel: channel, Day: day, Format: "csv", File: "/in/" + id, FileSHA256: id,
		StartedAt: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)}
	if err := db.StartRun(context.Background(), run, ledger.Lease{}); err != nil {
		t.Fatal(err)
	}
	run.Status, run.FinishedAt = reconcile.RunSucceeded, run.StartedAt.Add(time.Minute)
	res := &reconcile.Result{Run: run, Counts: map[reconcile.Category]int{}}
	if o.Result != nil {
		res.Findings = o.Result.Findings
	}
	res.NumberFindings()
	o.Result = res
	if _, err := db.CompleteRun(context.Background(), o); err != nil {
		t.Fatalf("CompleteRun %s: %v", id, err)
	}
}

func date(s string) time.Time {
	d, _ := time.Parse(time.DateOnly, s)
	return d
}

// openIDs returns the payout ids OpenPayouts answers, with what it says.
func openIDs(t *testing.T, db *ledger.DB, on string) map[string]reconcile.OpenPayout {
	t.Helper()
	open, err := db.OpenPayouts(context.Background(), "bank", mustDay(t, on), []string{"stripe"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]reconcile.OpenPayout{}
	for _, p := range open {
		out[p.ID] = p
	}
	return out
}

// TestPayoutsAcrossNights: a channel's payouts wait for the bank's
// statements; an arrival, a told finding and a credit no payout took are
// read back by later statement nights, never by a night of their own
// date (which redoes them), and a corrected file's word replaces its
// predecessor's.
func TestPayoutsAcrossNights(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	poA := reconcile.Payout{Channel: "stripe", ID: "po_A", Amount: 10000, Currency: "USD", ExpectedOn: date("2026-11-29"), Rows: 3, Line: 2}
	poB := reconcile.Payout{Channel: "stripe", ID: "po_B", Reference: "TX1XT", Amount: 5000, Currency: "USD", Stated: 5000, HasStated: true,
		ExpectedOn: date("2026-11-30"), Rows: 1, Line: 5}
	completeRun(t, db, "s-27", "stripe", "2026-11-27", ledger.Outcome{Payouts: []reconcile.Payout{poA, poB}})

	got := openIDs(t, db, "2026-11-29")
	if len(got) != 2 || got["po_A"].Payout != poA || got["po_B"].Payout != poB || got["po_A"].Arrived || got["po_A"].Told {
		t.Fatalf("open payouts: %+v", got)
	}

	in := func(key string, amount int64, counterparty string) reconcile.KeyedEntry {
		return reconcile.KeyedEntry{Key: key, BankEntry: reconcile.BankEntry{Account: "ACC", Statement: "S1", Amount: amount,
			Currency: "USD", Credit: true, Status: "BOOK", BookedOn: date("2026-11-29"), ValueOn: date("2026-11-29"),
			BankRef: key[4:], Counterparty: counterparty, Remittance: "payout", Line: 9}}
	}
	completeRun(t, db, "b-29", "bank", "2026-11-29", ledger.Outcome{
		Entries:  []reconcile.KeyedEntry{in("ACC/R1", 10000, "STRIPE"), in("ACC/R2", 777, "STRIPE")},
		Arrivals: []reconcile.PayoutArrival{{Channel: "stripe", PayoutID: "po_A", Keys: []string{"ACC/R1"}, Amount: 10000, On: date("2026-11-29")}},
	})
	got = openIDs(t, db, "2026-11-30")
	if a := got["po_A"]; !a.Arrived || !a.ArrivedOn.Equal(date("2026-11-29")) || a.ArrivedAmount != 10000 || a.Short || got["po_B"].Arrived {
		t.Errorf("after the 29th's statement: %+v", got)
	}
	if again := openIDs(t, db, "2026-11-29"); again["po_A"].Arrived {
		t.Error("the 29th's own arrival counts when the 29th is done again")
	}
	// Within the window after its arrival (3 days) a payout is looked at
	// for a return, the day after it is done with.
	if last := openIDs(t, db, "2026-12-02"); !last["po_A"].Arrived {
		t.Errorf("on 2026-12-02, the window's last day, po_A is not looked at: %+v", last)
	}
	if after := openIDs(t, db, "2026-12-03"); len(after) != 1 || after["po_B"].ID != "po_B" {
		t.Errorf("on 2026-12-03 a payout arrived on the 29th is still looked at: %+v", after)
	}
	if late := openIDs(t, db, "2026-12-10"); len(late) != 1 || late["po_B"].ID != "po_B" {
		t.Errorf("on 2026-12-10 a payout arrived on the 29th is still looked at: %+v", late)
	}
	credits, err := db.EarlierEntries(ctx, "bank", mustDay(t, "2026-11-30"))
	if err != nil || len(credits) != 1 || credits[0].Key != "ACC/R2" || credits[0].Amount != 777 || credits[0].Told {
		t.Errorf("earlier credits: %+v, %v; want ACC/R2 alone, untold", credits, err)
	}
	if own, _ := db.EarlierEntries(ctx, "bank", mustDay(t, "2026-11-29")); len(own) != 0 {
		t.Errorf("a night's own credits are earlier to itself: %+v", own)
	}

	// The 30th tells po_B missing and ACC/R2 unexpected: later nights know.
	missing := reconcile.Finding{Category: reconcile.PayoutMissing, Kind: reconcile.KindPayout, ChannelTxnID: "po_B",
		HasChannel: true, ChannelAmount: 5000, Currency: "USD",
		Payout: &reconcile.PayoutFacts{Channel: "stripe", ID: "po_B", ExpectedOn: date("2026-11-30")}}
	unexpected := reconcile.Finding{Category: reconcile.UnexpectedCredit, Kind: reconcile.KindPayout, ChannelTxnID: "ACC/R2",
		HasLocal: true, LocalAmount: 777, LocalCurrency: "USD",
		Payout: &reconcile.PayoutFacts{Account: "ACC", BankRef: "R2", BookedOn: date("2026-11-29")}}
	completeRun(t, db, "b-30", "bank", "2026-11-30", ledger.Outcome{Result: &reconcile.Result{Findings: []reconcile.Finding{missing, unexpected}}})
	if got := openIDs(t, db, "2026-12-01"); !got["po_B"].Told {
		t.Errorf("po_B told missing on the 30th, not known on the 1st: %+v", got["po_B"])
	}
	if credits, _ := db.EarlierEntries(ctx, "bank", mustDay(t, "2026-12-01")); len(credits) != 1 || !credits[0].Told {
		t.Errorf("ACC/R2 told unexpected on the 30th, not known on the 1st: %+v", credits)
	}
	stored, err := db.LoadResult(ctx, "b-30")
	if err != nil || len(stored.Findings) != 2 || stored.Findings[0].Payout == nil || *stored.Findings[0].Payout != *missing.Payout {
		t.Errorf("stored payout finding: %+v, %v", stored.Findings, err)
	}

	// A corrected file of the 27th: po_B is 60.00 now, po_A is gone.
	poB.Amount, poB.Stated = 6000, 6000
	completeRun(t, db, "s-27b", "stripe", "2026-11-27", ledger.Outcome{Payouts: []reconcile.Payout{poB}})
	if got := openIDs(t, db, "2026-12-01"); len(got) != 1 || got["po_B"].Amount != 6000 {
		t.Errorf("after the corrected file: %+v", got)
	}
}

// TestUnplacedReturnToldOnce: a reversal told payout_returned with no one
// payout named (more than one fit it) took no arrival; later nights read
// it back as told, so that it is not told again.
func TestUnplacedReturnToldOnce(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	back := reconcile.KeyedEntry{Key: "ACC/B7", BankEntry: reconcile.BankEntry{Account: "ACC", Statement: "S1", Amount: 5000,
		Currency: "USD", Reversal: true, Status: "BOOK", BookedOn: date("2026-11-29"), ValueOn: date("2026-11-29"),
		BankRef: "B7", Counterparty: "STRIPE", Line: 9}}
	returned := reconcile.Finding{Category: reconcile.PayoutReturned, Kind: reconcile.KindPayout, ChannelTxnID: "ACC/B7",
		HasLocal: true, LocalAmount: 5000, LocalCurrency: "USD",
		Payout: &reconcile.PayoutFacts{Account: "ACC", BankRef: "B7", BookedOn: date("2026-11-29")}}
	completeRun(t, db, "b-29", "bank", "2026-11-29", ledger.Outcome{Entries: []reconcile.KeyedEntry{back},
		Result: &reconcile.Result{Findings: []reconcile.Finding{returned}}})
	later, err := db.EarlierEntries(ctx, "bank", mustDay(t, "2026-11-30"))
	if err != nil || len(later) != 1 || later[0].Key != "ACC/B7" || !later[0].Told {
		t.Errorf("the 30th reads %+v, %v; want ACC/B7, told", later, err)
	}
}
