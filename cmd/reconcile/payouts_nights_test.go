package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A negative payout (the channel debits our account) that the bank
// credits back is payout_returned once: the credit that sent it back is
// kept with it, and no later night takes it for an unexplained credit.
func TestNegativePayoutReturnToldOnce(t *testing.T) {
	w := newPayoutWorld(t)
	w.run("shop", "2026-11-27", "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,payout_id\n"+
		"refund,S1,R1,X1,20.00,EUR,2026-11-27T09:00:00Z,,PAY-NEG1\n")
	// Expected the 28th (delay 1): debited that day.
	w.run("bank", "2026-11-28", camt("2026-11-28", 100000, camtEntry{-2000, "R28-1", "ACME PSP GMBH", "DIRECT DEBIT PAY-NEG1"}))
	s29 := readSummary(t, w.run("bank", "2026-11-29", camt("2026-11-29", 98000,
		camtEntry{2000, "R29-1", "ACME PSP GMBH", "RETURN PAY-NEG1"})))
	if s29.Counts["payout_returned"] != 1 {
		t.Fatalf("the 29th: %v; want the return told", s29.Counts)
	}
	s30 := readSummary(t, w.run("bank", "2026-11-30", camt("2026-11-30", 100000)))
	if s30.Counts["payout_returned"] != 0 {
		t.Errorf("the 30th: %v; the return of the 29th told again", s30.Counts)
	}
	w.wantCurrent("payout_returned", 1)
}

// A forced replay of the 29th's statement, after the 30th's ran, says
// what the 29th said: po_1AAAA arrived on the 29th by amount. A later
// statement's credit of the same amount is no rival: a date done again
// reads only the statements before it.
func TestForcedReplaySeesALaterStatement(t *testing.T) {
	w := newPayoutWorld(t)
	w.run("stripe", "2026-11-27", stripePayoutHeader+stripeCharge("po_1AAAA", "2026-11-29", "t1", "100.00"))
	bank29 := camt("2026-11-29", 100000, camtEntry{10000, "R29-1", "STRIPE PAYMENTS EUROPE", "STRIPE TRANSFER"})
	out29 := w.run("bank", "2026-11-29", bank29)
	if got := payoutStatus(t, out29, "2026-11-29"); got["po_1AAAA"] != "arrived" {
		t.Fatalf("the 29th: %v", got)
	}
	// The 30th: another credit of the same amount, nothing of it known yet.
	w.run("bank", "2026-11-30", camt("2026-11-30", 110000, camtEntry{10000, "R30-1", "STRIPE PAYMENTS EUROPE", "STRIPE TRANSFER"}))

	forced := w.run("bank", "2026-11-29", bank29, "--force")
	if s := readSummary(t, forced); s.NeedsReview != 0 {
		t.Errorf("the 29th forced: %v; the first run told nothing", s.Counts)
	}
	if got := payoutStatus(t, forced, "2026-11-29"); got["po_1AAAA"] != "arrived" {
		t.Errorf("the 29th forced: po_1AAAA %s, arrived on the first run", got["po_1AAAA"])
	}
}

// Two entries of one bank reference are told apart as R1 and R1-2; a
// third entry whose own reference is R1-2 gets a key of its own, and the
// night commits.
func TestEntryKeyRepeatMeetsARealReference(t *testing.T) {
	w := newPayoutWorld(t)
	body := camt("2026-11-28", 100000,
		camtEntry{1000, "R1", "Kunde A", "Rechnung 1"},
		camtEntry{2000, "R1", "Kunde B", "Rechnung 2"},
		camtEntry{3000, "R1-2", "Kunde C", "Rechnung 3"})
	if err := os.WriteFile(filepath.Join(w.dir, "bank-2026-11-28.xml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code := w.c.run(t, "run", "--config", w.cfg, "--dsn", w.dsn, "--channel", "bank", "--date", "2026-11-28",
		"--out", filepath.Join(w.dir, "out"))
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, w.c.errb)
	}
}

// The bank's statement of the 28th filed again as the 29th's (a re-sent
// file, or statements that overlap): its entry is in two current runs,
// and its unexpected_credit is told once.
func TestOneCreditInTwoStatementsToldOnce(t *testing.T) {
	w := newPayoutWorld(t)
	body := camt("2026-11-28", 100000, camtEntry{777, "R28-2", "STRIPE PAYMENTS EUROPE", "STRIPE ADJUSTMENT"})
	w.run("bank", "2026-11-28", body)
	w.run("bank", "2026-11-29", body)
	s := readSummary(t, w.run("bank", "2026-12-01", camt("2026-12-01", 100777)))
	if s.Counts["unexpected_credit"] != 1 {
		t.Errorf("the 1st: %v; want the one 7.77 credit told once", s.Counts)
	}
}

// A channel file reconciled after the statement its payout is on: the
// entry waiting among the unexplained ones carries it on the next night,
// a debit for a negative payout (the channel debits our account) too.
func TestLateFileNegativePayoutFoundOnTheNextNight(t *testing.T) {
	w := newPayoutWorld(t)
	w.run("bank", "2026-11-28", camt("2026-11-28", 100000, camtEntry{-2000, "R28-1", "ACME PSP GMBH", "DIRECT DEBIT PAY-NEG1"}))
	w.run("shop", "2026-11-27", "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,payout_id\n"+
		"refund,S1,R1,X1,20.00,EUR,2026-11-27T09:00:00Z,,PAY-NEG1\n")
	out := w.run("bank", "2026-12-01", camt("2026-12-01", 98000))
	if s := readSummary(t, out); s.Counts["payout_missing"] != 0 {
		t.Errorf("the 1st: %v; PAY-NEG1 was debited on the 28th", s.Counts)
	}
	if got := payoutStatus(t, out, "2026-12-01"); got["PAY-NEG1"] != "arrived" {
		t.Errorf("the 1st's Payouts sheet: %v", got)
	}
}

// The same with a positive payout, as the manual promises.
func TestLateFilePositivePayoutFoundOnTheNextNight(t *testing.T) {
	w := newPayoutWorld(t)
	w.run("bank", "2026-11-28", camt("2026-11-28", 100000, camtEntry{2000, "R28-1", "ACME PSP GMBH", "SETTLEMENT PAY-POS1"}))
	w.run("shop", "2026-11-27", "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,payout_id\n"+
		"payment,S1,,X1,20.00,EUR,2026-11-27T09:00:00Z,,PAY-POS1\n")
	out := w.run("bank", "2026-12-01", camt("2026-12-01", 102000))
	if s := readSummary(t, out); s.Counts["payout_missing"] != 0 {
		t.Errorf("the 1st: %v", s.Counts)
	}
	if got := payoutStatus(t, out, "2026-12-01"); got["PAY-POS1"] != "arrived" {
		t.Errorf("the 1st's Payouts sheet: %v", got)
	}
}

// A payout sent back stays sent back: the next night's Payouts sheet
// says returned, not arrived.
func TestReturnedPayoutStaysReturned(t *testing.T) {
	w := newPayoutWorld(t)
	w.run("shop", "2026-11-27", "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,payout_id\n"+
		"payment,S1,,X1,20.00,EUR,2026-11-27T09:00:00Z,,PAY-POS1\n")
	w.run("bank", "2026-11-28", camt("2026-11-28", 100000, camtEntry{2000, "R28-1", "ACME PSP GMBH", "SETTLEMENT PAY-POS1"}))
	out29 := w.run("bank", "2026-11-29", camt("2026-11-29", 102000, camtEntry{-2000, "R29-1", "ACME PSP GMBH", "RUECKLASTSCHRIFT PAY-POS1"}))
	if got := payoutStatus(t, out29, "2026-11-29"); got["PAY-POS1"] != "returned" {
		t.Fatalf("the 29th: %v", got)
	}
	out30 := w.run("bank", "2026-11-30", camt("2026-11-30", 100000))
	if got := payoutStatus(t, out30, "2026-11-30"); got["PAY-POS1"] != "returned" {
		t.Errorf("the 30th's Payouts sheet: PAY-POS1 %s, sent back on the 29th", got["PAY-POS1"])
	}
}

// A corrected channel file replaces what the one before said, whole: the
// payout it now says is 120.00, and the bank brought 100.00: the Payouts
// sheet says mismatch and the 20.00 is told, once.
func TestCorrectedChannelFileChangesAnArrivedPayout(t *testing.T) {
	w := newPayoutWorld(t)
	w.run("stripe", "2026-11-27", stripePayoutHeader+stripeCharge("po_1AAAA", "2026-11-29", "t1", "100.00"))
	w.run("bank", "2026-11-29", camt("2026-11-29", 100000, camtEntry{10000, "R29-1", "STRIPE PAYMENTS EUROPE", "STRIPE PAYOUT po_1AAAA"}))
	// The corrected report: one more charge in the payout.
	w.run("stripe", "2026-11-27", stripePayoutHeader+stripeCharge("po_1AAAA", "2026-11-29", "t1", "100.00")+
		stripeCharge("po_1AAAA", "2026-11-29", "t2", "20.00"))
	out := w.run("bank", "2026-11-30", camt("2026-11-30", 110000))
	got := payoutStatus(t, out, "2026-11-30")
	if got["po_1AAAA"] == "arrived" {
		t.Errorf("the 30th: po_1AAAA of 120.00 %s, the bank brought 100.00", got["po_1AAAA"])
	}
	w.wantCurrent("payout_amount_mismatch", 1)
}
