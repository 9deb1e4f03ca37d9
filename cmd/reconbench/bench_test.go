package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	f, err := WriteFiles(tiny, t.TempDir(), "")
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
	// 1 % chargebacks, a fifth of them on orders refunded in full.
	if c, o := f.Want.Counts[reconcile.Chargeback], f.Want.Counts[reconcile.OverRefund]; c != 2*20 || o != 2*4 || f.Chargebacks != c || f.BothDoors != o {
		t.Errorf("chargebacks %d (rows %d), over_refund %d (%d); want 40 and 8", c, f.Chargebacks, o, f.BothDoors)
	}
	if w := f.WantOf("wechatpay"); w.Counts[reconcile.Chargeback] != 0 || w.Counts[reconcile.OverRefund] != 0 {
		t.Errorf("the WeChat Pay bill, which has no chargebacks, is to report %v", w.Counts)
	}
	// Every channel row is a group's original, a duplicate or a
	// chargeback.
	originals := f.Want.Counts[reconcile.Matched] + f.Want.Counts[reconcile.AmountMismatch] +
		f.Want.Counts[reconcile.StatusMismatch] + f.Want.Counts[reconcile.MissingLocal]
	if rows := originals + f.Want.Counts[reconcile.DuplicatePayment] + f.Want.Counts[reconcile.DuplicateRefund] +
		f.Want.Counts[reconcile.Chargeback]; rows != f.Rows {
		t.Errorf("counts account for %d rows, the files have %d", rows, f.Rows)
	}
}

func TestSameDataEveryTime(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	fa, err := WriteFiles(tiny, a, "")
	if err != nil {
		t.Fatal(err)
	}
	fb, err := WriteFiles(tiny, b, "")
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
	f, err := WriteFiles(tiny, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, dsn)
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
// same rows as the canonical CSV but its chargebacks.
func TestWeChatBillParses(t *testing.T) {
	f, err := WriteFiles(tiny, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	wx := parse(t, f.WeChat, "wechatpay")
	var csv []rowKey
	for _, r := range parse(t, f.CSV, "csv") {
		if r.kind != reconcile.KindChargeback {
			csv = append(csv, r)
		}
	}
	if len(wx) != f.WeChatRows() || len(csv) != f.WeChatRows() || f.Rows != f.WeChatRows()+f.Chargebacks {
		t.Fatalf("wechatpay %d rows, csv %d rows but chargebacks, generated %d with %d chargebacks", len(wx), len(csv), f.Rows, f.Chargebacks)
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

// TestEarlierNightKeysDisjoint checks that no key, channel id or customer
// of an earlier night is tonight's or another night's.
func TestEarlierNightKeysDisjoint(t *testing.T) {
	spec := Spec{Payments: 2 * blockOrders, Seed: defaultSeed}
	owner := map[string]int{} // "kind key" -> night (0: tonight)
	claim := func(night int, kind, key string) {
		if prev, ok := owner[kind+" "+key]; ok && prev != night {
			t.Errorf("%s %s is in night %d and night %d", kind, key, prev, night)
		}
		owner[kind+" "+key] = night
	}
	for night := range 3 {
		for b := range spec.blocks() {
			blk := spec.block(b)
			if night > 0 {
				blk = spec.nightBlock(night, b)
			}
			for _, o := range blk.orders {
				claim(night, "order", o.no)
				claim(night, "user", strconv.FormatInt(o.userID, 10))
			}
			for _, r := range blk.refunds {
				claim(night, "refund", r.no)
			}
			for _, r := range blk.rows {
				claim(night, "channel id", r.channelID())
			}
		}
	}
	for _, tc := range []struct {
		back      int
		wantOrder string
	}{
		{1, "ORD2026112700000001"},
		{7, "ORD2026112100000001"},
	} {
		if got := spec.nightBlock(tc.back, 0).orders[0].no; got != tc.wantOrder {
			t.Errorf("night %d's first order: got %s, want %s", tc.back, got, tc.wantOrder)
		}
	}
}

// TestEarlierNightsAllMatch makes two earlier nights by running the real
// job on them, then tonight's run: the earlier runs report only matched,
// and tonight's still exactly what was planted. With -prune, the earlier
// nights' records are gone afterwards and their memory is not.
func TestEarlierNightsAllMatch(t *testing.T) {
	bin := buildReconcile(t)
	for _, prune := range []bool{false, true} {
		t.Run(fmt.Sprintf("prune=%v", prune), func(t *testing.T) { earlierNightsAllMatch(t, bin, prune) })
	}
}

func earlierNightsAllMatch(t *testing.T, bin string, prune bool) {
	ctx := context.Background()
	_, dsn := ledgertest.DB(t)
	spec := Spec{Payments: blockOrders, Seed: defaultSeed}
	dir := t.TempDir()
	files, err := WriteFiles(spec, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, dsn)
	if _, _, _, err := LoadLocal(ctx, conn, spec, "shop"); err != nil {
		t.Fatal(err)
	}
	cfg, err := writeBenchConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Mismatches: []string{}}
	ch := benchChannel{name: "shop", format: "csv", dsn: dsn}
	e := &benchEnv{spec: spec, tmp: dir, bin: bin, cfg: cfg, chans: []benchChannel{ch}, files: files, runs: 1, prune: prune, rep: rep}
	if err := e.makeEarlierNights(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := rep.EarlierNights.Dates, []string{"2026-11-26", "2026-11-27"}; !slices.Equal(got, want) {
		t.Errorf("earlier dates: got %v, want %v", got, want)
	}
	rows := spec.Payments + spec.refunds()
	for _, r := range rep.EarlierNights.Runs {
		if r.Counts[string(reconcile.Matched)] != rows {
			t.Errorf("earlier night %s: matched %d, want %d", r.Date, r.Counts[string(reconcile.Matched)], rows)
		}
	}
	if len(rep.EarlierNights.Runs) != 2 {
		t.Errorf("earlier runs: got %d, want 2", len(rep.EarlierNights.Runs))
	}
	if _, err := e.timeJob(ctx, ch, 1); err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Mismatches {
		t.Error(m)
	}
	var dates []string
	err = conn.QueryRow(ctx, `SELECT array_agg(business_date::text ORDER BY business_date) FROM runs
		WHERE status = 'SUCCEEDED' AND EXISTS (SELECT 1 FROM settled_keys s WHERE s.run_id = runs.id)`).Scan(&dates)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"2026-11-26", "2026-11-27", "2026-11-28"}; !slices.Equal(dates, want) {
		t.Errorf("runs that left a memory: got %v, want %v", dates, want)
	}
	var earlier int
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM orders WHERE order_no NOT LIKE 'ORD20261128%') +
		(SELECT count(*) FROM refunds WHERE refund_no NOT LIKE 'RF20261128%') +
		(SELECT count(*) FROM idempotency_records WHERE idem_key NOT LIKE '%20261128%')`).Scan(&earlier)
	if err != nil {
		t.Fatal(err)
	}
	// Each night has an order and an idempotency record per payment, a
	// refund and an idempotency record per refund.
	want := 2 * 2 * (spec.Payments + spec.refunds())
	if prune {
		want = 0
	}
	if earlier != want {
		t.Errorf("prune %v: the earlier nights' orders, refunds and idempotency records: got %d, want %d", prune, earlier, want)
	}
}

func buildReconcile(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "reconcile")
	if out, err := exec.Command("go", "build", "-o", bin, "reconcile/cmd/reconcile").CombinedOutput(); err != nil {
		t.Fatalf("go build reconcile/cmd/reconcile: %v\n%s", err, out)
	}
	return bin
}

func TestRewriteWindow(t *testing.T) {
	start := businessDate
	end := start.AddDate(0, 0, 1)
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"two literals",
			"WHERE l.at >= TIMESTAMPTZ '2026-11-27 00:00:00+08' AND l.at < TIMESTAMPTZ '2026-11-28 00:00:00+08'",
			"WHERE l.at >= TIMESTAMPTZ '2026-11-28 00:00:00+00' AND l.at < TIMESTAMPTZ '2026-11-29 00:00:00+00'", ""},
		{"other offsets",
			"a TIMESTAMPTZ '2026-01-01 00:00:00Z' b TIMESTAMPTZ '2026-01-02 00:00:00.5+00:00' c",
			"a TIMESTAMPTZ '2026-11-28 00:00:00+00' b TIMESTAMPTZ '2026-11-29 00:00:00+00' c", ""},
		{"a timestamp without a zone is not a window bound",
			"TIMESTAMP '2026-01-01 00:00:00' TIMESTAMPTZ '2026-11-27 00:00:00+08' TIMESTAMPTZ '2026-11-28 00:00:00+08'",
			"TIMESTAMP '2026-01-01 00:00:00' TIMESTAMPTZ '2026-11-28 00:00:00+00' TIMESTAMPTZ '2026-11-29 00:00:00+00'", ""},
		{"none", "SELECT 1", "", "found 0"},
		{"one", "WHERE at >= TIMESTAMPTZ '2026-11-27 00:00:00+08'", "", "found 1"},
		{"three", strings.Repeat("TIMESTAMPTZ '2026-11-27 00:00:00+08' ", 3), "", "found 3"},
		{"reversed", "at < TIMESTAMPTZ '2026-11-28 00:00:00+08' AND at >= TIMESTAMPTZ '2026-11-27 00:00:00+08'", "", "not before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rewriteWindow([]byte(tc.in), "counts.sql", start, end)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "counts.sql") {
					t.Fatalf("got error %v, want one naming counts.sql with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRewriteTheSharedScript(t *testing.T) {
	// The script as shipped beside the DuckDB runner, reduced to its window.
	in := []byte("  WHERE l.ok AND l.at >= TIMESTAMPTZ '2026-11-27 00:00:00+08' AND l.at < TIMESTAMPTZ '2026-11-28 00:00:00+08'\n")
	got, err := rewriteWindow(in, "counts_tuned.sql", businessDate, businessDate.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "+08") || !strings.Contains(string(got), "'2026-11-28 00:00:00+00'") {
		t.Errorf("window not moved: %s", got)
	}
}

func TestParsePeerCounts(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]int
		err      bool
	}{
		{"counts", "cat\tn\namount_mismatch\t3\nmatched\t2000\nmissing_channel\t4\n",
			map[string]int{"amount_mismatch": 3, "matched": 2000, "missing_channel": 4}, false},
		{"CRLF and blank lines", "cat\tn\r\n\r\nmatched\t5\r\n", map[string]int{"matched": 5}, false},
		{"the last result", "cat\tn\nmatched\t1\ncat\tn\nmatched\t2\n", map[string]int{"matched": 2}, false},
		{"no header", "matched\t5\n", nil, true},
		{"nothing", "", nil, true},
		{"not a number", "cat\tn\nmatched\tmany\n", nil, true},
		{"negative", "cat\tn\nmatched\t-1\n", nil, true},
		{"no tab", "cat\tn\nmatched 5\n", nil, true},
		{"twice", "cat\tn\nmatched\t5\nmatched\t6\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePeerCounts(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want error %v", err, tc.err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckPeer(t *testing.T) {
	job := Expected{Counts: map[reconcile.Category]int{
		reconcile.Matched: 100, reconcile.MissingChannel: 3, reconcile.Pending: 2, reconcile.AmountMismatch: 1,
		reconcile.SuspectedDuplicatePayment: 4, reconcile.FeeMismatch: 5, // not counted by the peer
	}}
	agreeing := map[string]int{"matched": 100, "missing_channel": 5, "amount_mismatch": 1}
	for _, tc := range []struct {
		name string
		peer map[string]int
		want []string
	}{
		{"missing_channel is the job's missing_channel+pending", agreeing, nil},
		{"zeros may be left out", map[string]int{"matched": 100, "missing_channel": 5, "amount_mismatch": 1, "missing_local": 0}, nil},
		{"missing_channel without pending", map[string]int{"matched": 100, "missing_channel": 3, "amount_mismatch": 1},
			[]string{"MISMATCH duckdb: missing_channel = 3, job csv missing_channel+pending 5"}},
		{"a category the job lacks", map[string]int{"matched": 100, "missing_channel": 5, "amount_mismatch": 1, "duplicate_refund": 2},
			[]string{"MISMATCH duckdb: duplicate_refund = 2, job csv duplicate_refund 0"}},
		{"one missing", map[string]int{"matched": 100, "missing_channel": 5},
			[]string{"MISMATCH duckdb: amount_mismatch = 0, job csv amount_mismatch 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rep Report
			rep.checkPeer("duckdb", job, tc.peer)
			if !slices.Equal(rep.Mismatches, tc.want) {
				t.Errorf("got %q, want %q", rep.Mismatches, tc.want)
			}
		})
	}
}

// TestPeerData checks the peer's local records are the rows LoadLocal
// copies, and its channel.csv the canonical CSV.
func TestPeerData(t *testing.T) {
	dir := t.TempDir()
	peer := filepath.Join(dir, "duckdb")
	f, err := WriteFiles(tiny, dir, peer)
	if err != nil {
		t.Fatal(err)
	}
	var orders, refunds, pendingOrders int
	for b := range tiny.blocks() {
		blk := tiny.block(b)
		orders += len(blk.orders)
		refunds += len(blk.refunds)
		for _, o := range blk.orders {
			if o.paidAt.IsZero() {
				pendingOrders++
			}
		}
	}
	lines := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(peer, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	ol, rl := lines("orders.csv"), lines("refunds.csv")
	if len(ol) != orders || len(rl) != refunds {
		t.Errorf("orders.csv %d lines, refunds.csv %d; want %d and %d", len(ol), len(rl), orders, refunds)
	}
	var nullPaid int
	for _, l := range ol {
		fields := strings.Split(l, ",")
		if len(fields) != 6 || fields[4] != "shop" {
			t.Fatalf("orders.csv line %q: want 6 fields, channel shop", l)
		}
		if fields[5] == "" {
			nullPaid++
		}
	}
	if nullPaid != pendingOrders || nullPaid == 0 {
		t.Errorf("orders without paid_at: %d, want %d (and some)", nullPaid, pendingOrders)
	}
	if got, want := strings.Split(rl[0], ","), 7; len(got) != want {
		t.Errorf("refunds.csv line %q: %d fields, want %d", rl[0], len(got), want)
	}
	// channel.csv is the canonical CSV less its chargeback rows.
	a, _ := os.ReadFile(f.CSV)
	var want []string
	for _, l := range strings.SplitAfter(string(a), "\n") {
		if l != "" && !strings.HasPrefix(l, "chargeback,") {
			want = append(want, l)
		}
	}
	b, err := os.ReadFile(filepath.Join(peer, "channel.csv"))
	if err != nil || string(b) != strings.Join(want, "") || len(want) != f.WeChatRows()+1 {
		t.Errorf("channel.csv is not the canonical CSV less its chargebacks (%v)", err)
	}
}

func TestSummarize(t *testing.T) {
	run := func(n int, wall, rss int64, parse time.Duration) JobResult {
		return JobResult{Input: "csv", Run: n, Wall: time.Duration(wall), MaxRSSKiB: rss, Stages: []Stage{{"parse", parse}}}
	}
	runs := []JobResult{run(1, 30, 100, 3), run(2, 10, 300, 1), run(3, 20, 200, 2)}
	for _, tc := range []struct {
		name                string
		pick                func([]int64) int64
		runs                []JobResult
		wall, rss, parseDur int64
	}{
		{"min", minOf, runs, 10, 100, 1},
		{"median of three", medianOf, runs, 20, 200, 2},
		{"median of two", medianOf, runs[:2], 20, 200, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(tc.runs, tc.pick)
			parse, _ := got.stage("parse")
			if int64(got.Wall) != tc.wall || got.MaxRSSKiB != tc.rss || int64(parse) != tc.parseDur {
				t.Errorf("got wall %d rss %d parse %d, want %d %d %d", got.Wall, got.MaxRSSKiB, parse, tc.wall, tc.rss, tc.parseDur)
			}
		})
	}
}

// connect opens a connection to dsn for the test, closed when it ends.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
