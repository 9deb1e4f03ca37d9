package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reconcile/ledger"
	"strings"
	"testing"

	"reconcile"

	"github.com/xuri/excelize/v2"
)

// payoutWorld is a shop paid through two channels, stripe (Stripe's
// payout report) and shop (the canonical CSV), both paying out to one
// euro account whose camt.053 statements arrive each morning.
type payoutWorld struct {
	t        *testing.T
	c        *cli
	db       *ledger.DB
	dsn, cfg string
	dir      string
}

const payoutIBAN = "DE89370400440532013000"

func newPayoutWorld(t *testing.T) *payoutWorld {
	db, dsn := dbWith(t, "")
	w := &payoutWorld{t: t, c: newCLI(nil), db: db, dsn: dsn, dir: t.TempDir()}
	cfg := map[string]any{
		"out_dir": filepath.Join(w.dir, "out"),
		"channels": []map[string]any{
			{"name": "stripe", "format": "stripe", "time_zone": "UTC", "path": filepath.Join(w.dir, "stripe-{date}.csv"),
				"payouts": map[string]any{"counterparties": []string{"STRIPE"}, "window_days": 2}},
			{"name": "shop", "format": "csv", "time_zone": "UTC", "path": filepath.Join(w.dir, "shop-{date}.csv"),
				"payouts": map[string]any{"counterparties": []string{"ACME PSP"}, "window_days": 2, "delay_days": 1}},
			{"name": "bank", "format": "camt053", "time_zone": "UTC", "account": payoutIBAN,
				"path": filepath.Join(w.dir, "bank-{date}.xml")},
		},
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.cfg = filepath.Join(w.dir, "reconcile.json")
	if err := os.WriteFile(w.cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// run reconciles channel on date from the file body, written where the
// config's path template puts it, and returns the run's out directory.
func (w *payoutWorld) run(channel, date, body string, extra ...string) string {
	w.t.Helper()
	ext := map[string]string{"stripe": ".csv", "shop": ".csv", "bank": ".xml"}[channel]
	if err := os.WriteFile(filepath.Join(w.dir, channel+"-"+date+ext), []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
	out := filepath.Join(w.dir, "out", date, channel, strings.Join(extra, ""))
	args := append([]string{"run", "--config", w.cfg, "--dsn", w.dsn, "--channel", channel, "--date", date, "--out", out}, extra...)
	if code := w.c.run(w.t, args...); code != ExitOK {
		w.t.Fatalf("%s %s: exit %d\n%s", channel, date, code, w.c.errb)
	}
	return out
}

const stripePayoutHeader = "automatic_payout_id,automatic_payout_effective_at,balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,payment_metadata[order_id]\n"

// stripeCharge is one charge of a Stripe payout report.
func stripeCharge(payout, due, txn, net string) string {
	return fmt.Sprintf("%s,%s 00:00:00,%s,2026-11-27 10:00:00,eur,%s,0.00,%s,charge,ch_%s,ORD-%s\n", payout, due, txn, net, net, txn, txn)
}

// camtEntry is one entry of a test statement.
type camtEntry struct {
	amount       int64 // cents; below zero a debit
	ref          string
	counterparty string
	text         string
}

// camt is a camt.053 of the euro account for date, its closing balance
// what its entries make of opening.
func camt(date string, opening int64, entries ...camtEntry) string {
	var b strings.Builder
	closing := opening
	for _, e := range entries {
		closing += e.amount
	}
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M-%s</MsgId><CreDtTm>%sT06:00:00Z</CreDtTm></GrpHdr>
<Stmt><Id>S-%s</Id><Acct><Id><IBAN>%s</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>%s</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>%s</Dt></Dt></Bal>
`, date, date, date, payoutIBAN, reconcile.FormatAmount(opening, "EUR"), date, reconcile.FormatAmount(closing, "EUR"), date)
	for _, e := range entries {
		ind, role, amount := "CRDT", "Dbtr", e.amount
		if amount < 0 {
			ind, role, amount = "DBIT", "Cdtr", -amount
		}
		fmt.Fprintf(&b, `<Ntry><Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>%s</Dt></BookgDt><ValDt><Dt>%s</Dt></ValDt>
<AcctSvcrRef>%s</AcctSvcrRef><NtryDtls><TxDtls><RltdPties><%s><Nm>%s</Nm></%s></RltdPties><RmtInf><Ustrd>%s</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
`, reconcile.FormatAmount(amount, "EUR"), ind, date, date, e.ref, role, e.counterparty, role, e.text)
	}
	b.WriteString("</Stmt></BkToCstmrStmt></Document>\n")
	return b.String()
}

// payoutStatus reads the Payouts sheet of a statement night: payout id →
// status.
func payoutStatus(t *testing.T, out, date string) map[string]string {
	t.Helper()
	rows := sheetRows(t, filepath.Join(out, "review-bank-"+date+".xlsx"), "Payouts")
	got := map[string]string{}
	for _, r := range rows[1:] {
		got[r[1]] = r[7]
	}
	return got
}

// TestPayoutsReachTheBank: rule 15 on PostgreSQL over four statement
// nights. Two payouts of the CSV channel arrive as one credit; a Stripe
// payout arrives, another short, one late within its window, one never;
// a Stripe credit nothing explains is told once its window is over; the
// statement again is a replay, forced it tells nothing twice, corrected
// it replaces what it said.
func TestPayoutsReachTheBank(t *testing.T) {
	w := newPayoutWorld(t)
	w.run("stripe", "2026-11-27", stripePayoutHeader+
		stripeCharge("po_1AAAA", "2026-11-29", "t1", "60.00")+stripeCharge("po_1AAAA", "2026-11-29", "t2", "40.00")+
		stripeCharge("po_1BBBB", "2026-11-29", "t3", "50.00"))
	w.run("shop", "2026-11-27", "type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,fee,payout_id\n"+
		"payment,S1,,X1,30.50,EUR,2026-11-27T09:00:00Z,0.50,PAY-0001\n"+
		"payment,S2,,X2,20.00,EUR,2026-11-27T09:30:00Z,,PAY-0002\n")
	// The 28th's Stripe night, in two shards: its payouts are kept once.
	stripe28 := stripePayoutHeader + stripeCharge("po_1CCCC", "2026-11-30", "t4", "80.00") +
		stripeCharge("po_1DDDD", "2026-11-30", "t5", "25.00")
	w.run("stripe", "2026-11-28", stripe28, "--shard", "0/2")
	w.run("stripe", "2026-11-28", stripe28, "--shard", "1/2")

	s28 := readSummary(t, w.run("bank", "2026-11-28", camt("2026-11-28", 100000,
		camtEntry{5000, "R28-1", "ACME PSP GMBH", "SETTLEMENT PAY-0001 PAY-0002"},
		camtEntry{777, "R28-2", "STRIPE PAYMENTS EUROPE", "STRIPE ADJUSTMENT"},
		camtEntry{-30000, "R28-3", "Vermieter GmbH", "Miete November"})))
	if s28.ChannelRows != 3 || s28.NeedsReview != 0 {
		t.Errorf("the 28th: %d entries, %d to review (%v); want 3 and none", s28.ChannelRows, s28.NeedsReview, s28.Counts)
	}

	bank29 := camt("2026-11-29", 75777,
		camtEntry{10000, "R29-1", "STRIPE PAYMENTS EUROPE", "STRIPE PAYOUT po_1AAAA"},
		camtEntry{4500, "R29-2", "STRIPE PAYMENTS EUROPE", "STRIPE PAYOUT po_1BBBB"})
	out29 := w.run("bank", "2026-11-29", bank29)
	if s := readSummary(t, out29); s.Counts["payout_amount_mismatch"] != 1 || s.MoneyAtRisk["EUR"] != "5.00" {
		t.Errorf("the 29th: %v, at risk %v; want po_1BBBB 5.00 short", s.Counts, s.MoneyAtRisk)
	}
	if got := payoutStatus(t, out29, "2026-11-29"); got["po_1AAAA"] != "arrived" || got["po_1BBBB"] != "mismatch" ||
		got["PAY-0001"] != "arrived" || got["PAY-0002"] != "arrived" || got["po_1CCCC"] != "expected" {
		t.Errorf("the 29th's Payouts sheet: %v", got)
	}

	// A late payout within its window; the unexplained credit's window over.
	out01 := w.run("bank", "2026-12-01", camt("2026-12-01", 90277,
		camtEntry{2500, "R01-1", "STRIPE PAYMENTS EUROPE", "STRIPE PAYOUT po_1DDDD"}))
	s01 := readSummary(t, out01)
	if s01.Counts["unexpected_credit"] != 1 || s01.Counts["payout_missing"] != 0 {
		t.Errorf("the 1st: %v; want the 7.77 credit told, nothing missing yet", s01.Counts)
	}
	if got := payoutStatus(t, out01, "2026-12-01"); got["po_1DDDD"] != "arrived" || got["po_1CCCC"] != "expected" ||
		got["po_1BBBB"] != "mismatch" || got["PAY-0001"] != "arrived" {
		t.Errorf("the 1st's Payouts sheet: %v", got)
	}
	out03 := w.run("bank", "2026-12-03", camt("2026-12-03", 92777, camtEntry{-1000, "R03-1", "Telekom", "Rechnung"}))
	s03 := readSummary(t, out03)
	if s03.Counts["payout_missing"] != 1 || s03.Counts["unexpected_credit"] != 0 {
		t.Errorf("the 3rd: %v; want po_1CCCC missing, the credit not told again", s03.Counts)
	}
	if !strings.Contains(w.c.out.String(), "stripe payout po_1CCCC of EUR 80.00 expected on 2026-11-30 has not arrived") {
		t.Errorf("the 3rd's alert does not name the missing payout:\n%s", w.c.out)
	}

	// The 29th again: a replay; forced, the same, told once; corrected,
	// po_1BBBB is whole.
	if again := readSummary(t, w.run("bank", "2026-11-29", bank29)); again.RunID != readSummary(t, out29).RunID {
		t.Errorf("the same statement again is not a replay: run %s, first %s", again.RunID, readSummary(t, out29).RunID)
	}
	if forced := readSummary(t, w.run("bank", "2026-11-29", bank29, "--force")); forced.Counts["payout_amount_mismatch"] != 1 {
		t.Errorf("forced: %v", forced.Counts)
	}
	w.wantCurrent("payout_amount_mismatch", 1)
	corrected := camt("2026-11-29", 75777,
		camtEntry{10000, "R29-1", "STRIPE PAYMENTS EUROPE", "STRIPE PAYOUT po_1AAAA"},
		camtEntry{5000, "R29-2", "STRIPE PAYMENTS EUROPE", "STRIPE PAYOUT po_1BBBB"})
	outC := w.run("bank", "2026-11-29", corrected)
	if s := readSummary(t, outC); s.NeedsReview != 0 {
		t.Errorf("corrected: %v", s.Counts)
	}
	w.wantCurrent("payout_amount_mismatch", 0)
	if got := payoutStatus(t, outC, "2026-11-29"); got["po_1BBBB"] != "arrived" {
		t.Errorf("corrected Payouts sheet: %v", got)
	}
	w.wantCurrent("payout_missing", 1)
	w.wantCurrent("unexpected_credit", 1)
	var kept int
	if err := w.db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM payouts WHERE payout_id = 'po_1CCCC'`).Scan(&kept); err != nil || kept != 1 {
		t.Errorf("po_1CCCC kept %d times by the 28th's two shards (%v), want once", kept, err)
	}
}

// wantCurrent checks how many findings of category current runs hold.
func (w *payoutWorld) wantCurrent(category string, want int) {
	w.t.Helper()
	var n int
	err := w.db.Pool().QueryRow(context.Background(), `
SELECT count(*) FROM findings f JOIN runs r ON r.id = f.run_id
 WHERE f.category = $1 AND r.status = 'SUCCEEDED' AND r.superseded_by IS NULL`, category).Scan(&n)
	if err != nil || n != want {
		w.t.Errorf("%s in current runs: %d (%v), want %d", category, n, err, want)
	}
}

// sheetRows reads a sheet of a workbook, row by row.
func sheetRows(t *testing.T, path, sheet string) [][]string {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestStatementRefused: a statement the job cannot take whole stops its
// night with the place named and nothing written; a dry run writes its
// reports and nothing else; a statement is never sharded.
func TestStatementRefused(t *testing.T) {
	w := newPayoutWorld(t)
	good := camt("2026-11-28", 1000, camtEntry{500, "R1", "STRIPE", "po_1AAAA"})
	cases := []struct {
		name, body string
		says       []string
	}{
		{"another account", strings.Replace(good, payoutIBAN, "NL91ABNA0417164300", 1),
			[]string{"bank-2026-11-28.xml:7: column account", `a statement of account "NL91ABNA0417164300"`}},
		{"unbalanced", strings.Replace(good, `<Amt Ccy="EUR">15.00</Amt>`, `<Amt Ccy="EUR">15.01</Amt>`, 1),
			[]string{"control total does not add up"}},
		{"an entity", strings.Replace(good, "<Document", `<!DOCTYPE d [<!ENTITY x "y">]><Document`, 1),
			[]string{"bank-2026-11-28.xml:2", "DOCTYPE"}},
		{"a cent too fine", strings.Replace(good, `<Amt Ccy="EUR">5.00</Amt>`, `<Amt Ccy="EUR">5.001</Amt>`, 1),
			[]string{"Ntry[1]/Amt", "more decimals than the currency has"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(w.dir, "bank-2026-11-28.xml"), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			w.c.errb.Reset()
			code := w.c.run(t, "run", "--config", w.cfg, "--dsn", w.dsn, "--channel", "bank", "--date", "2026-11-28",
				"--out", filepath.Join(w.dir, "refused"))
			if code != ExitFailed {
				t.Fatalf("exit %d, want %d\n%s", code, ExitFailed, w.c.errb)
			}
			for _, s := range tc.says {
				if !strings.Contains(w.c.errb.String(), s) {
					t.Errorf("stderr does not say %q:\n%s", s, w.c.errb)
				}
			}
			w.wantRows("bank_entries", 0)
		})
	}

	dry := w.run("bank", "2026-11-28", good, "--dry-run")
	if s := readSummary(t, dry); s.ChannelRows != 1 || s.Status != "SUCCEEDED" {
		t.Errorf("dry run: %+v", s)
	}
	w.wantRows("bank_entries", 0)
	w.wantRows("runs WHERE channel = 'bank' AND status = 'SUCCEEDED'", 0)

	if code := w.c.run(t, "run", "--config", w.cfg, "--dsn", w.dsn, "--channel", "bank", "--date", "2026-11-28",
		"--shard", "0/2"); code != ExitUsage {
		t.Errorf("a sharded statement: exit %d, want %d", code, ExitUsage)
	}

	// A channel file refused keeps no payout.
	if err := os.WriteFile(filepath.Join(w.dir, "shop-2026-11-28.csv"), []byte(
		"type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at,payout_id\n"+
			"payment,S1,,X1,30.00,EUR,2026-11-28T09:00:00Z,PAY-0009\n"+
			"payout,,,PX,31.00,EUR,2026-11-28T23:00:00Z,PAY-0009\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := w.c.run(t, "run", "--config", w.cfg, "--dsn", w.dsn, "--channel", "shop", "--date", "2026-11-28",
		"--out", filepath.Join(w.dir, "shop-refused")); code != ExitFailed {
		t.Errorf("a payout its rows do not add up to: exit %d\n%s", code, w.c.errb)
	}
	w.wantRows("payouts", 0)
}

// wantRows checks how many rows a table (and condition) holds.
func (w *payoutWorld) wantRows(from string, want int) {
	w.t.Helper()
	var n int
	if err := w.db.Pool().QueryRow(context.Background(), "SELECT count(*) FROM "+from).Scan(&n); err != nil || n != want {
		w.t.Errorf("%s: %d rows (%v), want %d", from, n, err, want)
	}
}
