package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/bankfeed"
	"reconcile/channelfeed"
	"reconcile/ledger/ledgertest"
	"reconcile/matcher/payouts"
)

// tinyPayouts is two full blocks.
var tinyPayouts = PayoutSpec{Payouts: 2 * blockPayouts, Seed: defaultSeed}

// readPayoutNight reads a generated night with the job's own readers:
// the channel's payouts, and the statement's entries (the reader checks
// its balances).
func readPayoutNight(t *testing.T, n PayoutNight) ([]payouts.Open, []payouts.Entry) {
	t.Helper()
	var open []payouts.Open
	opts := channelfeed.Options{Location: time.UTC, Payouts: func(p reconcile.Payout) error {
		p.Channel = pspChannel
		open = append(open, payouts.Open{Payout: p})
		return nil
	}}
	if _, err := channelfeed.ParseFile(context.Background(), n.ChannelFile, "csv", opts, func(reconcile.Transaction) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var ents []payouts.Entry
	stmts, _, err := bankfeed.ReadFile(n.Statement, payoutsFormat, bankfeed.Options{}, func(e reconcile.BankEntry) error {
		ents = append(ents, payouts.Entry{BankEntry: e, Key: e.Key()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 1 || stmts[0].Account != payoutIBAN || stmts[0].Opening != n.Opening || stmts[0].Closing != n.Closing {
		t.Errorf("statements %+v, want one of %s from %d to %d", stmts, payoutIBAN, n.Opening, n.Closing)
	}
	return open, ents
}

// TestPayoutNightPlanted reads a generated night back and applies rule 15
// to it as a first night: it finds what was planted, and every payout
// but the missing arrives.
func TestPayoutNightPlanted(t *testing.T) {
	n, err := WritePayoutNight(tinyPayouts, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Per block: 30 + 20 + 40 + 5 + 5 planted payouts of 1,000; entries
	// 900 + 30 + 40 + 20 + 5 for them, 5 + 5 + 20 besides.
	if n.Payouts != 2000 || n.Entries != 2050 || n.Short != 10 || n.Missing != 10 || n.Unexpected != 10 {
		t.Errorf("night: %d payouts, %d entries, %d short, %d missing, %d unexpected; want 2000, 2050, 10, 10, 10",
			n.Payouts, n.Entries, n.Short, n.Missing, n.Unexpected)
	}
	open, ents := readPayoutNight(t, n)
	if len(open) != n.Payouts || len(ents) != n.Entries {
		t.Fatalf("read %d payouts and %d entries, wrote %d and %d", len(open), len(ents), n.Payouts, n.Entries)
	}
	res := payouts.Match(payouts.Input{Day: n.Day, Payouts: open, Entries: ents,
		Terms: map[string]reconcile.PayoutTerms{pspChannel: {Counterparties: []string{pspName}, Window: payoutWindow}}})
	got := Expected{Counts: map[reconcile.Category]int{}}
	for _, f := range res.Findings {
		got.Counts[f.Category]++
	}
	var rep Report
	rep.check("rule 15", n.Want(0), got)
	for _, m := range rep.Mismatches {
		t.Error(m)
	}
	if len(res.Arrivals) != n.Payouts-n.Missing {
		t.Errorf("%d payouts arrived, want all %d but the %d missing", len(res.Arrivals), n.Payouts, n.Missing)
	}
	var byAmount int
	for _, a := range res.Arrivals {
		if len(a.Keys) == 1 && strings.Contains(entryText(ents, a.Keys[0]), "SETTLEMENT") {
			byAmount++
		}
	}
	if byAmount != 2*30 {
		t.Errorf("%d payouts arrived by amount, want 60", byAmount)
	}
}

func entryText(ents []payouts.Entry, key string) string {
	for _, e := range ents {
		if e.Key == key {
			return e.Remittance
		}
	}
	return ""
}

func TestPayoutNightSameEveryTime(t *testing.T) {
	a, err := WritePayoutNight(tinyPayouts, t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := WritePayoutNight(tinyPayouts, t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{a.ChannelFile, b.ChannelFile}, {a.Statement, b.Statement}} {
		x, _ := os.ReadFile(p[0])
		y, _ := os.ReadFile(p[1])
		if len(x) == 0 || string(x) != string(y) {
			t.Errorf("%s differs between two runs with one seed", p[0])
		}
	}
	if a.Day != businessDate.AddDate(0, 0, -2) || a.ChannelDay != businessDate.AddDate(0, 0, -3) {
		t.Errorf("night 2: statement of %s, channel file of %s", a.Day, a.ChannelDay)
	}
}

// TestPayoutsWithTheJob runs the job on tellCreditAfter earlier payout
// nights and tonight's: each night finds what was planted, tonight the
// unexpected credits of the first night too.
func TestPayoutsWithTheJob(t *testing.T) {
	ctx := context.Background()
	_, dsn := ledgertest.DB(t)
	dir := t.TempDir()
	cfg, err := writeBenchConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Mismatches: []string{}}
	e := &benchEnv{tmp: dir, bin: buildReconcile(t), cfg: cfg, runs: 1, rep: rep}
	spec := PayoutSpec{Payouts: blockPayouts, Seed: defaultSeed}
	jobs, err := e.benchPayouts(ctx, dsn, spec, tellCreditAfter)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Mismatches {
		t.Error(m)
	}
	if len(jobs) != 2 || jobs[1].Channel != bankChannel {
		t.Fatalf("timed runs %+v, want the channel's night and the statement's", jobs)
	}
	p := rep.Payouts
	if len(p.Earlier) != tellCreditAfter || p.Planted[string(reconcile.UnexpectedCredit)] != 5 ||
		p.Planted[string(reconcile.PayoutMissing)] != 5 || p.Planted[string(reconcile.PayoutAmountMismatch)] != 5 {
		t.Errorf("earlier nights %d, planted tonight %v; want %d and 5 each", len(p.Earlier), p.Planted, tellCreditAfter)
	}
	if _, ok := jobs[1].stage("match"); !ok {
		t.Errorf("the statement night logged no match stage: %v", jobs[1].Stages)
	}
}
