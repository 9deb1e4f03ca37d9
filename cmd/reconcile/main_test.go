package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"reconcile"
	"reconcile/fixtures"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

func TestMain(m *testing.M) {
	// The crash tests run the CLI as a child process they can kill: the
	// test binary itself, told so by the environment.
	if os.Getenv(childEnv) == "1" {
		app := &App{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Now: time.Now}
		os.Exit(app.Main(context.Background(), os.Args[1:]))
	}
	ledgertest.Main(m)
}

// cli runs the command line in-process and returns its exit status and
// what it printed.
type cli struct {
	env  map[string]string
	app  *App
	out  *bytes.Buffer
	errb *bytes.Buffer
}

func newCLI(env map[string]string) *cli {
	c := &cli{env: env, out: &bytes.Buffer{}, errb: &bytes.Buffer{}}
	c.app = &App{
		Stdout: c.out, Stderr: c.errb,
		Getenv: func(k string) string { return c.env[k] },
		Now:    time.Now,
	}
	return c
}

func (c *cli) run(t *testing.T, args ...string) int {
	t.Helper()
	c.out.Reset()
	c.errb.Reset()
	return c.app.Main(context.Background(), args)
}

// setup returns a migrated database loaded with the WeChat Pay fixture's
// local records, its DSN, and the path of its bill.
func setup(t *testing.T) (*ledger.DB, string, string) {
	t.Helper()
	return setupChannel(t, "wechatpay")
}

// setupChannel does the same for any fixture channel.
func setupChannel(t *testing.T, channel string) (*ledger.DB, string, string) {
	t.Helper()
	ch, ok := fixtures.Lookup(channel)
	if !ok {
		t.Fatalf("no fixture for %s", channel)
	}
	db, dsn := ledgertest.DB(t)
	if err := db.Exec(context.Background(), ch.LocalSQL()); err != nil {
		t.Fatal(err)
	}
	bill := filepath.Join(t.TempDir(), ch.BillName)
	if err := os.WriteFile(bill, ch.Bill(), 0o644); err != nil {
		t.Fatal(err)
	}
	return db, dsn, bill
}

// dbWith returns a migrated database with the given SQL run in it.
func dbWith(t *testing.T, sql string) (*ledger.DB, string) {
	t.Helper()
	db, dsn := ledgertest.DB(t)
	if err := db.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
	return db, dsn
}

// wechatBill is the WeChat Pay fixture's bill.
func wechatBill() []byte {
	ch, _ := fixtures.Lookup("wechatpay")
	return ch.Bill()
}

func runArgs(dsn, bill, out string, extra ...string) []string {
	return append([]string{"run", "--date", "2026-11-28", "--channel", "wechatpay", "--format", "wechatpay",
		"--tz", "Asia/Shanghai", "--file", bill, "--dsn", dsn, "--out", out}, extra...)
}

type summaryFile struct {
	RunID        string            `json:"run_id"`
	Channel      string            `json:"channel"`
	BusinessDate string            `json:"business_date"`
	Status       string            `json:"status"`
	ChannelRows  int               `json:"channel_rows"`
	LocalRows    int               `json:"local_rows"`
	Counts       map[string]int    `json:"counts"`
	Replay       bool              `json:"replay"`
	AutoReversed int               `json:"auto_reversed"`
	NeedsReview  int               `json:"needs_review"`
	Error        string            `json:"error"`
	MoneyAtRisk  map[string]string `json:"money_at_risk"`
}

func readSummary(t *testing.T, dir string) summaryFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s summaryFile
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("summary.json: %v\n%s", err, b)
	}
	return s
}

// wantCounts is what the demo's bill and records must produce.
var wantCounts = map[string]int{
	"matched": 13, "amount_mismatch": 1, "status_mismatch": 1, "missing_local": 1,
	"missing_channel": 1, "duplicate_payment": 2, "duplicate_refund": 1, "unrecognized": 1,
	"pending": 0, "duplicate_vanished": 0, "over_refund": 0, "suspected_duplicate_refund": 0,
	"suspected_duplicate_payment": 0, "fee_mismatch": 0, "order_mismatch": 0, "refund_currency_mismatch": 0,
	"chargeback": 0, "dispute_mismatch": 0, "refund_reversed": 0,
}

func checkCounts(t *testing.T, got map[string]int) {
	t.Helper()
	if len(got) != len(wantCounts) {
		t.Errorf("counts: got %v, want every category: %v", got, wantCounts)
	}
	for k, v := range wantCounts {
		if got[k] != v {
			t.Errorf("counts[%s]: got %d, want %d", k, got[k], v)
		}
	}
}

// findingKey identifies a finding across runs.
func findingKeys(fs []reconcile.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, strings.Join([]string{string(f.Category), f.OrderNo, f.RefundNo, f.ChannelTxnID,
			reconcile.FormatAmount(f.ChannelAmount, "CNY"), reconcile.FormatAmount(f.LocalAmount, "CNY"), f.Hint}, "|"))
	}
	sort.Strings(out)
	return out
}

func TestRunTwiceSameDate(t *testing.T) {
	db, dsn, bill := setup(t)
	ctx := context.Background()
	c := newCLI(nil)
	out1, out2 := t.TempDir(), t.TempDir()

	if code := c.run(t, runArgs(dsn, bill, out1)...); code != ExitOK {
		t.Fatalf("first run: exit %d, stderr:\n%s", code, c.errb)
	}
	s1 := readSummary(t, out1)
	checkCounts(t, s1.Counts)
	if s1.Status != "SUCCEEDED" || s1.ChannelRows != 20 || s1.AutoReversed != 2 || s1.NeedsReview != 6 {
		t.Errorf("summary: got %+v, want SUCCEEDED, 20 rows, 2 auto reversed, 6 to review", s1)
	}
	journals1, err := ledgertest.Journals(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(journals1) != 2 {
		t.Fatalf("journals after the first run: got %d, want 2", len(journals1))
	}
	wantKeys := []string{"reversal/wechatpay/4200009999202611280000000013", "reversal/wechatpay/50300099992026112800000000004"}
	for i, j := range journals1 {
		if j.IdempotencyKey != wantKeys[i] {
			t.Errorf("journal %d: got key %q, want %q", i, j.IdempotencyKey, wantKeys[i])
		}
		if !j.Lines.Balanced() || len(j.Lines) != 2 {
			t.Errorf("journal %s: lines %+v, want two balanced lines", j.IdempotencyKey, j.Lines)
		}
	}

	// The same file again: the first run's result, marked as a replay,
	// nothing redone, no second alert.
	if code := c.run(t, runArgs(dsn, bill, out2)...); code != ExitOK {
		t.Fatalf("second run: exit %d, stderr:\n%s", code, c.errb)
	}
	replayed := readSummary(t, out2)
	if replayed.RunID != s1.RunID || !replayed.Replay {
		t.Errorf("same file again: got run %s replay=%v, want run %s as a replay", replayed.RunID, replayed.Replay, s1.RunID)
	}
	if strings.Contains(c.out.String(), "Reconciliation wechatpay") {
		t.Errorf("a replay sent a second alert:\n%s", c.out)
	}
	if _, err := os.Stat(filepath.Join(out2, "review-wechatpay-2026-11-28.xlsx")); err != nil {
		t.Errorf("replay wrote no workbook: %v", err)
	}
	var runs int
	db.Pool().QueryRow(ctx, `SELECT count(*) FROM runs`).Scan(&runs)
	if runs != 1 {
		t.Errorf("runs after a replay: got %d, want 1", runs)
	}

	// --force re-evaluates: a new run, the same findings, no journal twice.
	out3 := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out3, "--force")...); code != ExitOK {
		t.Fatalf("forced run: exit %d, stderr:\n%s", code, c.errb)
	}
	s2 := readSummary(t, out3)
	if s2.RunID == s1.RunID || s2.Replay {
		t.Errorf("forced run: got run %s replay=%v, want a new run", s2.RunID, s2.Replay)
	}
	checkCounts(t, s2.Counts)
	f1, err := db.RunFindings(ctx, s1.RunID)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := db.RunFindings(ctx, s2.RunID)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := findingKeys(f1), findingKeys(f2)
	if len(k1) != 8 || strings.Join(k1, "\n") != strings.Join(k2, "\n") {
		t.Errorf("findings differ between runs or are not 8:\nfirst:\n%s\nsecond:\n%s", strings.Join(k1, "\n"), strings.Join(k2, "\n"))
	}
	journals2, err := ledgertest.Journals(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(journals2) != len(journals1) {
		t.Errorf("journals after the second run: got %d, want %d (none doubled)", len(journals2), len(journals1))
	}
}

func TestConcurrentRunsReverseOnce(t *testing.T) {
	db, dsn, bill := setup(t)
	const n = 4
	var wg sync.WaitGroup
	codes := make([]int, n)
	errs := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := newCLI(nil)
			codes[i] = c.app.Main(context.Background(), runArgs(dsn, bill, filepath.Join(t.TempDir(), "out")))
			errs[i] = c.errb.String()
		}(i)
	}
	wg.Wait()
	for i, code := range codes {
		if code != ExitOK {
			t.Errorf("run %d: exit %d, stderr:\n%s", i, code, errs[i])
		}
	}
	got, err := ledgertest.JournalCount(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if got != 2 {
		t.Errorf("journals after %d concurrent runs: got %d, want 2", n, got)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	db, dsn, bill := setup(t)
	c := newCLI(nil)
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out, "--dry-run")...); code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, c.errb)
	}
	checkCounts(t, readSummary(t, out).Counts)
	if _, err := os.Stat(filepath.Join(out, "review-wechatpay-2026-11-28.xlsx")); err != nil {
		t.Errorf("workbook: %v", err)
	}
	if !strings.Contains(c.out.String(), "2026-11-28") {
		t.Errorf("dry run printed no alert:\n%s", c.out)
	}
	var runs, findings int
	pool := db.Pool()
	if err := pool.QueryRow(context.Background(), "select (select count(*) from runs), (select count(*) from findings)").Scan(&runs, &findings); err != nil {
		t.Fatal(err)
	}
	journals, _ := ledgertest.JournalCount(context.Background(), db)
	if runs+findings+journals != 0 {
		t.Errorf("dry run wrote runs=%d findings=%d journals=%d, want nothing", runs, findings, journals)
	}
}
