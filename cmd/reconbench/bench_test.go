package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/ledger/ledgertest"
)

func TestMain(m *testing.M) { ledgertest.Main(m) }

// tiny is two full blocks, so both variants of the alternating refund
// anomalies occur.
var tiny = Spec{Payments: 2 * blockOrders, Seed: defaultSeed}

// anomalies are the categories every full block must plant.
var anomalies = []reconcile.Category{
	reconcile.AmountMismatch, reconcile.StatusMismatch, reconcile.MissingLocal, reconcile.MissingChannel,
	reconcile.DuplicatePayment, reconcile.DuplicateRefund,
}

func TestPlantedCounts(t *testing.T) {
	f, err := WriteFiles(tiny, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Per block: payments 2+2+2+2+4 dup, refunds 1 each; both sides'
	// duplicates are one row each.
	want := map[reconcile.Category]int{
		reconcile.AmountMismatch:   2 * 3,
		reconcile.StatusMismatch:   2 * 3,
		reconcile.MissingLocal:     2 * 3,
		reconcile.MissingChannel:   2 * 3,
		reconcile.DuplicatePayment: 2 * 4,
		reconcile.DuplicateRefund:  2 * 2,
	}
	for _, c := range anomalies {
		if f.Want.Counts[c] != want[c] {
			t.Errorf("%s: planted %d, want %d", c, f.Want.Counts[c], want[c])
		}
	}
	if f.Want.AutoReversed != 2*3 {
		t.Errorf("auto-reversible duplicates: %d, want 6", f.Want.AutoReversed)
	}
	// Every channel row is a group's original or a duplicate.
	originals := f.Want.Counts[reconcile.Matched] + f.Want.Counts[reconcile.AmountMismatch] +
		f.Want.Counts[reconcile.StatusMismatch] + f.Want.Counts[reconcile.MissingLocal]
	if rows := originals + f.Want.Counts[reconcile.DuplicatePayment] + f.Want.Counts[reconcile.DuplicateRefund]; rows != f.Rows {
		t.Errorf("counts account for %d rows, the files have %d", rows, f.Rows)
	}
}

func TestSameDataEveryTime(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	fa, err := WriteFiles(tiny, a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := WriteFiles(tiny, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{fa.CSV, fb.CSV}, {fa.WeChat, fb.WeChat}} {
		x, _ := os.ReadFile(p[0])
		y, _ := os.ReadFile(p[1])
		if string(x) != string(y) {
			t.Errorf("%s differs between two runs with one seed", filepath.Base(p[0]))
		}
	}
}

// TestBaselineCountsEqualPlanted loads the tiny data set into a real
// database and checks the SQL baseline finds exactly what was planted.
func TestBaselineCountsEqualPlanted(t *testing.T) {
	ctx := context.Background()
	_, dsn := ledgertest.DB(t)
	f, err := WriteFiles(tiny, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	orders, refunds, idem, err := LoadLocal(ctx, conn, tiny, "shop")
	if err != nil {
		t.Fatal(err)
	}
	// Missing-local records are the only ones not loaded; every loaded
	// record has an idempotency record.
	if orders+refunds != idem {
		t.Errorf("loaded %d orders and %d refunds but %d idempotency records", orders, refunds, idem)
	}
	var withIdem, inProgress, failed int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'IN_PROGRESS'),
		count(*) FILTER (WHERE status = 'FAILED') FROM idempotency_records`).Scan(&withIdem, &inProgress, &failed); err != nil {
		t.Fatal(err)
	}
	if inProgress == 0 || failed == 0 {
		t.Errorf("idempotency records: %d IN_PROGRESS, %d FAILED; want some of each", inProgress, failed)
	}

	res, err := RunBaseline(ctx, conn, f.CSV, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != int64(f.Rows) {
		t.Errorf("baseline copied %d rows, the file has %d", res.Rows, f.Rows)
	}
	var rep Report
	rep.check("SQL baseline", f.Want, res.Got)
	for _, m := range rep.Mismatches {
		t.Error(m)
	}
	for _, c := range anomalies {
		if res.Got.Counts[c] == 0 {
			t.Errorf("nothing planted in %s", c)
		}
	}
}

type rowKey struct {
	kind                 reconcile.Kind
	order, refund, txnID string
	amount, fee          int64
	at                   time.Time
}

func parse(t *testing.T, path, format string) []rowKey {
	t.Helper()
	var rows []rowKey
	_, err := channelfeed.ParseFile(context.Background(), path, format, channelfeed.Options{Location: time.UTC},
		func(tx reconcile.Transaction) error {
			if tx.Currency != currency || tx.Status != reconcile.StatusSuccess {
				t.Errorf("%s line %d: %s %s, want CNY success", format, tx.Line, tx.Currency, tx.Status)
			}
			rows = append(rows, rowKey{tx.Kind, tx.OrderNo, tx.RefundNo, tx.ChannelTxnID, tx.Amount, tx.FeeMilli, tx.OccurredAt.UTC()})
			return nil
		})
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return rows
}

// TestWeChatBillParses reads the bill with the job's own parser, which
// checks the summary row against the detail rows, and checks it holds the
// same rows as the canonical CSV.
func TestWeChatBillParses(t *testing.T) {
	f, err := WriteFiles(tiny, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wx := parse(t, f.WeChat, "wechatpay")
	csv := parse(t, f.CSV, "csv")
	if len(wx) != f.Rows || len(csv) != f.Rows {
		t.Fatalf("wechatpay %d rows, csv %d rows, generated %d", len(wx), len(csv), f.Rows)
	}
	var refunds int
	for i := range wx {
		if wx[i] != csv[i] {
			t.Fatalf("row %d differs:\nwechatpay %+v\ncsv       %+v", i+1, wx[i], csv[i])
		}
		if wx[i].kind == reconcile.KindRefund {
			refunds++
		}
	}
	if refunds == 0 {
		t.Error("no refund rows")
	}
	b, err := os.ReadFile(f.WeChat)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:3]) != "\uFEFF" {
		t.Error("the bill has no UTF-8 BOM")
	}
}

func TestParseStages(t *testing.T) {
	stderr := `{"time":"2026-11-29T03:00:00Z","level":"INFO","msg":"opening the database"}
{"time":"2026-11-29T03:00:05Z","level":"INFO","msg":"run committed","run_id":"r1","channel":"shop","business_date":"2026-11-28","findings":3,"stages":{"parse":1900000000,"earlier_rows":12000000,"local_records":850000000,"match":300500000,"still_open":1000000,"reports":2100000000,"commit":62000000000},"reports_heap_bytes":52428800}
`
	got, heap, ok := parseRunLine(stderr)
	if !ok {
		t.Fatal("no stages")
	}
	if heap != 50<<20 {
		t.Errorf("reports heap = %d, want %d", heap, 50<<20)
	}
	r := JobResult{Stages: got}
	for name, want := range map[string]time.Duration{
		"parse": 1900 * time.Millisecond, "earlier_rows": 12 * time.Millisecond, "match": 300500 * time.Microsecond,
		"commit": 62 * time.Second,
	} {
		if d, ok := r.stage(name); !ok || d != want {
			t.Errorf("%s = %v (%v), want %v", name, d, ok, want)
		}
	}
	if got[0].Name != "parse" || got[len(got)-1].Name != "commit" {
		t.Errorf("stages out of order: %v", got)
	}
	if _, ok := parseStages("no such line\n{\"msg\":\"x\"}\n"); ok {
		t.Error("found stages in a line without them")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"100k": 100_000, "1M": 1_000_000, "10M": 10_000_000, "2000": 2000} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1G", "-5", "abc", "0"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): no error", in)
		}
	}
}

func TestFormatting(t *testing.T) {
	if got := thousands(1100000); got != "1,100,000" {
		t.Errorf("thousands: %s", got)
	}
	if got := mib(1536); got != "1.5" {
		t.Errorf("mib: %s", got)
	}
	if got := perSecond(1_100_000, 2*time.Second); got != 550_000 {
		t.Errorf("perSecond: %d", got)
	}
}

func TestCheckReportsMismatch(t *testing.T) {
	want := Expected{Counts: map[reconcile.Category]int{reconcile.Matched: 10, reconcile.MissingLocal: 2}, AutoReversed: 1}
	got := Expected{Counts: map[reconcile.Category]int{reconcile.Matched: 10, reconcile.MissingLocal: 1, reconcile.Pending: 1}, AutoReversed: 1}
	var rep Report
	rep.check("job csv", want, got)
	if len(rep.Mismatches) != 2 {
		t.Fatalf("mismatches %q, want missing_local and pending", rep.Mismatches)
	}
	rep = Report{}
	rep.check("job csv", want, want)
	if len(rep.Mismatches) != 0 {
		t.Errorf("equal counts reported as %q", rep.Mismatches)
	}
}

func TestWithSearchPath(t *testing.T) {
	for in, want := range map[string]string{
		"host=/tmp/x port=5432 user=postgres": "host=/tmp/x port=5432 user=postgres search_path=s",
		"postgres://u@h/db":                   "postgres://u@h/db?search_path=s",
		"postgres://u@h/db?sslmode=disable":   "postgres://u@h/db?sslmode=disable&search_path=s",
	} {
		if got := withSearchPath(in, "s"); got != want {
			t.Errorf("withSearchPath(%q) = %q, want %q", in, got, want)
		}
	}
}
