package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"reconcile/ledger"
)

// TestFourShardsEqualOneRun: the WeChat Pay fixture reconciled whole in
// one database and as four shards in another gives exactly the same
// findings and journals, and the report over the shards the same counts.
func TestFourShardsEqualOneRun(t *testing.T) {
	wholeDB, wholeDSN, bill := setup(t)
	c := newCLI(nil)
	wholeOut := t.TempDir()
	if code := c.run(t, runArgs(wholeDSN, bill, wholeOut)...); code != ExitOK {
		t.Fatalf("whole run: exit %d\n%s", code, c.errb)
	}

	shardDB, shardDSN, _ := setup(t)
	shardOut := t.TempDir()
	for i := 0; i < 4; i++ {
		args := runArgs(shardDSN, bill, shardOut, "--shard", fmt.Sprintf("%d/4", i))
		if code := c.run(t, args...); code != ExitOK {
			t.Fatalf("shard %d/4: exit %d\n%s", i, code, c.errb)
		}
		if strings.Contains(c.out.String(), "Reconciliation wechatpay") {
			t.Errorf("shard %d/4 sent an alert of its own", i)
		}
	}
	reportOut := t.TempDir()
	if code := c.run(t, "report", "--date", "2026-11-28", "--channel", "wechatpay", "--tz", "Asia/Shanghai",
		"--shards", "4", "--dsn", shardDSN, "--out", reportOut); code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, c.errb)
	}
	if n := strings.Count(c.out.String(), "Reconciliation wechatpay"); n != 1 {
		t.Errorf("report alerts: got %d, want 1", n)
	}
	whole, report := readSummary(t, wholeOut), readSummary(t, reportOut)
	checkCounts(t, report.Counts)
	if report.ChannelRows != whole.ChannelRows || report.AutoReversed != whole.AutoReversed || report.NeedsReview != whole.NeedsReview {
		t.Errorf("report: %+v; whole run: %+v", report, whole)
	}
	// The same report again: no second alert.
	if code := c.run(t, "report", "--date", "2026-11-28", "--channel", "wechatpay", "--tz", "Asia/Shanghai",
		"--dsn", shardDSN, "--out", reportOut); code != ExitOK || strings.Contains(c.out.String(), "Reconciliation wechatpay") {
		t.Errorf("second report: exit %d, alerted again:\n%s", code, c.out)
	}

	// The report's Trend sheet adds the shards up into the whole run's.
	if got, want := trendRows(t, reportOut), trendRows(t, wholeOut); got != want || !strings.Contains(got, "2026-11-28|13|1|1|1|1|2|1|0|0|0|0|0|0|0|0|0|1|0|0") {
		t.Errorf("report's Trend sheet:\n%s\nwhole run's:\n%s", got, want)
	}
	if got, want := dump(t, shardDB), dump(t, wholeDB); got != want {
		t.Errorf("findings and journals differ\nshards:\n%s\nwhole:\n%s", got, want)
	}
	if dirs, _ := filepath.Glob(filepath.Join(shardOut, "shard-*-of-4", "summary.json")); len(dirs) != 4 {
		t.Errorf("shard reports: got %d summary.json files, want one per shard: %v", len(dirs), dirs)
	}
	// A missing shard is refused, naming it.
	_, missingDSN, _ := setup(t)
	for _, i := range []int{0, 1, 3} {
		if code := c.run(t, runArgs(missingDSN, bill, t.TempDir(), "--shard", fmt.Sprintf("%d/4", i))...); code != ExitOK {
			t.Fatalf("shard %d/4: exit %d\n%s", i, code, c.errb)
		}
	}
	if code := c.run(t, "report", "--date", "2026-11-28", "--channel", "wechatpay", "--dsn", missingDSN, "--out", t.TempDir()); code != ExitFailed ||
		!strings.Contains(c.errb.String(), "shard 2/4 has not run yet") {
		t.Errorf("report with a shard missing: exit %d\n%s", code, c.errb)
	}
}

// trendRows is the Trend sheet of the wechatpay workbook in dir, a line
// per row.
func trendRows(t *testing.T, dir string) string {
	t.Helper()
	f, err := excelize.OpenFile(filepath.Join(dir, "review-wechatpay-2026-11-28.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Trend")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "|") + "\n")
	}
	return b.String()
}

// dump is the findings of the current runs and every journal, as sorted
// lines without run ids.
func dump(t *testing.T, db *ledger.DB) string {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Pool().Query(ctx, `
SELECT f.category || '|' || coalesce(f.order_no, '') || '|' || coalesce(f.refund_no, '') || '|' ||
       coalesce(f.channel_txn_id, '') || '|' || coalesce(f.channel_amount::text, '') || '|' ||
       coalesce(f.local_amount::text, '') || '|' || f.state || '|' || coalesce(f.journal_key, '') || '|' || coalesce(f.hint, '')
  FROM findings f JOIN runs r ON r.id = f.run_id
 WHERE r.status = 'SUCCEEDED' AND r.superseded_by IS NULL
UNION ALL
SELECT 'journal|' || j.idempotency_key || '|' || j.amount || '|' || string_agg(l.account || ':' || l.amount, ',' ORDER BY l.line_no)
  FROM journals j JOIN journal_lines l ON l.journal_id = j.id
 GROUP BY j.idempotency_key, j.amount`)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		lines = append(lines, s)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestShardReportInTheBusinessZone: the report over shard runs shows its
// times in the channel's business zone, as each run's own workbook does,
// not in the zone the database hands the runs back in.
func TestShardReportInTheBusinessZone(t *testing.T) {
	_, dsn, bill := setup(t)
	c := newCLI(nil)
	for i := 0; i < 2; i++ {
		if code := c.run(t, runArgs(dsn, bill, t.TempDir(), "--shard", fmt.Sprintf("%d/2", i))...); code != ExitOK {
			t.Fatalf("shard %d/2: exit %d\n%s", i, code, c.errb)
		}
	}
	out := t.TempDir()
	if code := c.run(t, "report", "--date", "2026-11-28", "--channel", "wechatpay", "--tz", "Asia/Shanghai",
		"--dsn", dsn, "--out", out); code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, c.errb)
	}
	f, err := excelize.OpenFile(filepath.Join(out, "review-wechatpay-2026-11-28.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Summary")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if len(r) >= 2 && (r[0] == "Started" || r[0] == "Finished") {
			found = true
			if !strings.HasSuffix(r[1], "+08:00") {
				t.Errorf("Summary %s: got %q, want a time in Asia/Shanghai (+08:00)", r[0], r[1])
			}
		}
	}
	if !found {
		t.Fatalf("no Started or Finished row on the Summary sheet: %v", rows)
	}
}
