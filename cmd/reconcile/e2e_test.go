package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/config"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
	"reconcile/nightly"
	"reconcile/reports"
	"reconcile/reports/slacktest"
)

func TestSlackAlertWithWorkbook(t *testing.T) {
	_, dsn, bill := setup(t)
	fake := slacktest.NewServer(t)
	c := newCLI(map[string]string{"SLACK_BOT_TOKEN": "xoxb-test-token", "SLACK_CHANNEL": "#recon"})
	c.app.SlackOptions = []slack.Option{fake.Option()}
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out)...); code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, c.errb)
	}
	var calls []string
	for _, call := range fake.Calls() {
		calls = append(calls, call.Path)
	}
	want := []string{slacktest.PostMessage, slacktest.GetUploadURL, slacktest.Upload, slacktest.CompleteUpload}
	if strings.Join(calls, ",") != strings.Join(want, ",") {
		t.Errorf("calls: got %v, want %v", calls, want)
	}
	posted := lastPost(fake)
	for _, phrase := range []string{"2026-11-28", "wechatpay", "ORD202611280007"} {
		if !strings.Contains(posted, phrase) {
			t.Errorf("posted blocks do not mention %q:\n%s", phrase, posted)
		}
	}
	book, err := os.ReadFile(filepath.Join(out, "review-wechatpay-2026-11-28.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	if uploaded := lastUpload(fake); len(uploaded) == 0 || string(uploaded) != string(book) {
		t.Errorf("uploaded %d bytes, want the workbook's %d bytes exactly", len(uploaded), len(book))
	}
	if strings.Contains(c.out.String()+c.errb.String(), "xoxb-test-token") {
		t.Error("the token leaked into the output")
	}
}

func TestWorkbookOfARun(t *testing.T) {
	_, dsn, bill := setup(t)
	c := newCLI(nil)
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out)...); code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, c.errb)
	}
	f, err := excelize.OpenFile(filepath.Join(out, "review-wechatpay-2026-11-28.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := strings.Join(f.GetSheetList(), ","), "Summary,Review,Pending,Auto-reversed,Trend"; got != want {
		t.Errorf("sheets: got %s, want %s", got, want)
	}
	// The first run of the channel: the Trend sheet holds its own counts.
	trend, err := f.GetRows("Trend")
	if err != nil {
		t.Fatal(err)
	}
	wantTrend := [][]string{{"Business Date"}, {"2026-11-28"}, nil,
		{"Only this run's business date: no earlier date of wechatpay has a successful run."}}
	for _, c := range reconcile.Categories {
		wantTrend[0] = append(wantTrend[0], string(c))
		wantTrend[1] = append(wantTrend[1], strconv.Itoa(wantCounts[string(c)]))
	}
	if fmt.Sprintf("%q", trend) != fmt.Sprintf("%q", wantTrend) {
		t.Errorf("Trend sheet:\ngot  %q\nwant %q", trend, wantTrend)
	}
	rows, err := f.GetRows("Review")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+6 {
		t.Fatalf("Review rows: got %d, want header + 6", len(rows))
	}
	header := map[string]int{}
	for i, h := range rows[0] {
		header[h] = i
	}
	var found bool
	for _, r := range rows[1:] {
		if r[header["Order No"]] != "ORD202611280007" {
			continue
		}
		found = true
		cell := func(col string) string {
			if i := header[col]; i < len(r) {
				return r[i]
			}
			return ""
		}
		if cell("Category") != "amount_mismatch" || cell("Local Amount") != "88.00" || cell("Channel Amount") != "80.00" || cell("Difference") != "-8.00" || cell("Currency") != "CNY" {
			t.Errorf("ORD202611280007 row: got %v", r)
		}
		if cell("Time") != "2026-11-28 13:15:40" {
			t.Errorf("time: got %q, want the business zone's 2026-11-28 13:15:40", cell("Time"))
		}
	}
	if !found {
		t.Error("no Review row for ORD202611280007")
	}
	auto, _ := f.GetRows("Auto-reversed")
	if len(auto) != 1+2 {
		t.Errorf("Auto-reversed rows: got %d, want header + 2", len(auto))
	}
}

func TestDemoInProcess(t *testing.T) {
	_, dsn := ledgertest.DB(t)
	c := newCLI(map[string]string{"RECONCILE_DATABASE_URL": dsn})
	out := t.TempDir()
	if code := c.run(t, "demo", "--out", out); code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, c.errb)
	}
	checkCounts(t, readSummary(t, filepath.Join(out, "2026-11-28", "wechatpay")).Counts)
	for _, ch := range []string{"alipay", "stripe", "adyen"} {
		if s := readSummary(t, filepath.Join(out, "2026-11-28", ch)); s.Status != "SUCCEEDED" {
			t.Errorf("demo %s: status %q", ch, s.Status)
		}
	}
	// The Stripe demo shows the new-key cases, its fee checked against the
	// demo's contract.
	stripe := readSummary(t, filepath.Join(out, "2026-11-28", "stripe")).Counts
	for cat, n := range map[string]int{"over_refund": 2, "suspected_duplicate_payment": 1, "fee_mismatch": 1, "unrecognized": 1,
		"chargeback": 3, "dispute_mismatch": 1} {
		if stripe[cat] != n {
			t.Errorf("demo stripe %s: got %d, want %d (%v)", cat, stripe[cat], n, stripe)
		}
	}
	for _, phrase := range []string{"would send", "wechatpay", "alipay", "stripe", "adyen", "review-adyen-2026-11-28.xlsx", "over_refund"} {
		if !strings.Contains(c.out.String(), phrase) {
			t.Errorf("demo output does not contain %q:\n%s", phrase, c.out)
		}
	}
	// Again on the same database: fixtures load twice, nothing doubles.
	if code := c.run(t, "demo", "--out", out); code != ExitOK {
		t.Fatalf("second demo: exit %d, stderr:\n%s", code, c.errb)
	}
}

// TestSchedulerCatchesUp: with an injected clock, two nights missed by
// downtime are caught up in one tick, in date order; files not there are
// waited for, and alerted once past their deadline; the next tick redoes
// nothing.
func TestSchedulerCatchesUp(t *testing.T) {
	db, dsn := ledgertest.DB(t)
	inbox := t.TempDir()
	for _, date := range []string{"2026-11-26", "2026-11-27"} {
		os.WriteFile(filepath.Join(inbox, "shop-"+date+".csv"), []byte(
			"type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n"+
				"payment,O-"+date+",,T-"+date+",1.00,USD,"+date+"T10:00:00Z\n"), 0o644)
	}
	cfg := config.Default()
	cfg.OutDir = t.TempDir()
	cfg.Schedule.LookbackDays = 4
	cfg.Channels = []config.Channel{{Name: "shop", Format: "csv", TimeZone: "UTC",
		Path: filepath.Join(inbox, "shop-{date}.csv"), Deadline: config.Duration(14 * time.Hour)}}
	ledgerDB, err := ledger.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer ledgerDB.Close()
	var out, log bytes.Buffer
	now := time.Date(2026, 11, 28, 16, 0, 0, 0, time.UTC) // past 14:00: the 27th's deadline
	logger := (&App{}).loggerTo(&log, false, nil)
	job := &nightly.Job{DB: ledgerDB, Notifier: reports.NewPrintNotifier(&out), Config: cfg, Now: func() time.Time { return now }, Log: logger}
	s := &nightly.Scheduler{Config: cfg, Job: job, Now: func() time.Time { return now }, Log: logger}

	s.Tick(context.Background())
	var got []string
	for _, line := range logLines(t, &log) {
		if line["msg"] == "scheduled run done" {
			got = append(got, fmt.Sprint(line["business_date"]))
		}
	}
	if want := "[2026-11-26 2026-11-27]"; fmt.Sprint(got) != want {
		t.Errorf("runs done: got %v, want %s in that order\n%s", got, want, log.String())
	}
	var succeeded int
	db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM runs WHERE status = 'SUCCEEDED'`).Scan(&succeeded)
	if succeeded != 2 {
		t.Errorf("succeeded runs: got %d, want 2", succeeded)
	}
	// The 24th and 25th never came: one alert each, past their deadlines.
	if n := strings.Count(out.String(), "Not arrived"); n != 2 {
		t.Errorf("overdue alerts: got %d, want 2\n%s", n, out.String())
	}

	out.Reset()
	s.Tick(context.Background())
	var n int
	db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM runs`).Scan(&n)
	if n != 2 || strings.Contains(out.String(), "Not arrived") {
		t.Errorf("second tick: %d runs (want 2), output:\n%s", n, out.String())
	}
	t.Logf("figures: 2 missed nights caught up in one tick in date order; 2 overdue files alerted once; second tick did nothing")
}

func TestScheduleTickAndStop(t *testing.T) {
	db, dsn, bill := setup(t)
	dir := t.TempDir()
	cfg := map[string]any{
		"out_dir":  filepath.Join(dir, "out"),
		"schedule": map[string]any{"spec": "@every 1s", "time_zone": "Asia/Shanghai", "lookback_days": 1},
		"channels": []map[string]string{{"name": "wechatpay", "format": "wechatpay", "path": bill, "time_zone": "Asia/Shanghai"}},
	}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "config.json")
	os.WriteFile(cfgPath, b, 0o644)

	c := newCLI(map[string]string{"RECONCILE_DATABASE_URL": dsn})
	// The bill is for the 28th: tick as if it were the 29th.
	c.app.Now = func() time.Time { return time.Date(2026, 11, 29, 3, 0, 0, 0, time.FixedZone("CST", 8*3600)) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() { done <- c.app.Main(ctx, []string{"schedule", "--config", cfgPath}) }()

	deadline := time.Now().Add(20 * time.Second)
	for {
		n, _ := ledgertest.JournalCount(context.Background(), db)
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("no tick reconciled the date within 20s; stderr:\n%s", c.errb)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("schedule exit: got %d, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("schedule did not stop after its context was cancelled")
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "2026-11-28", "wechatpay", "summary.json")); err != nil {
		t.Errorf("scheduled run wrote no summary: %v", err)
	}
	var running int
	db.Pool().QueryRow(context.Background(), "select count(*) from runs where status = 'RUNNING'").Scan(&running)
	if running != 0 {
		t.Errorf("runs left RUNNING after stop: %d", running)
	}
}

// TestBareDateRunsConfiguredChannels: `reconcile --date D --config F` finds
// each channel's file through its path template and takes the channel's
// format and time zone from the config.
func TestBareDateRunsConfiguredChannels(t *testing.T) {
	_, dsn, bill := setup(t)
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	b, _ := os.ReadFile(bill)
	os.WriteFile(filepath.Join(inbox, "20261128_ALL.csv"), b, 0o644)
	cfg := map[string]any{
		"out_dir": filepath.Join(dir, "out"),
		"channels": []map[string]string{{"name": "wechatpay", "format": "wechatpay",
			"path": filepath.Join(inbox, "{yyyymmdd}_ALL.csv"), "time_zone": "Asia/Shanghai"}},
	}
	raw, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "reconcile.json")
	os.WriteFile(cfgPath, raw, 0o644)

	c := newCLI(map[string]string{"RECONCILE_DATABASE_URL": dsn})
	if code := c.run(t, "--date", "2026-11-28", "--config", cfgPath); code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, c.errb)
	}
	checkCounts(t, readSummary(t, filepath.Join(dir, "out", "2026-11-28", "wechatpay")).Counts)

	// The next date's file is not there: that channel's run fails, exit 1.
	if code := c.run(t, "--date", "2026-11-29", "--config", cfgPath); code != ExitFailed {
		t.Fatalf("missing file: exit %d, want %d; stderr:\n%s", code, ExitFailed, c.errb)
	}
	if !strings.Contains(c.errb.String(), "20261129_ALL.csv") {
		t.Errorf("error does not name the missing file:\n%s", c.errb)
	}
}

func TestExampleConfigLoads(t *testing.T) {
	cfg, err := config.Load("../../reconcile.example.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Channels) != 6 || cfg.Schedule.Spec != "0 * * * *" || cfg.Slack.Channel != "#payments-recon" {
		t.Errorf("example config: got %+v", cfg)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"channels":[{"name":"x","time_zone":"Mars/Base"}],"schedule":{"spec":"61 * * * *"},"slak":{}}`), 0o644)
	if _, err := config.Load(bad); err == nil || !strings.Contains(err.Error(), "slak") {
		t.Errorf("unknown key: got %v, want an error naming it", err)
	}
	os.WriteFile(bad, []byte(`{"channels":[{"name":"x","time_zone":"Mars/Base"}],"schedule":{"spec":"61 * * * *"}}`), 0o644)
	_, err = config.Load(bad)
	for _, want := range []string{"Mars/Base", "61 * * * *"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad config: got %v, want an error naming %q", err, want)
		}
	}
}

// TestTwoReplicasTickAtOnce: two `reconcile schedule` replicas tick at the
// same moment: every date is reconciled once, and every overdue file is
// alerted once between them.
func TestTwoReplicasTickAtOnce(t *testing.T) {
	db, dsn := ledgertest.DB(t)
	inbox := t.TempDir()
	for _, date := range []string{"2026-11-25", "2026-11-26", "2026-11-27"} {
		os.WriteFile(filepath.Join(inbox, "shop-"+date+".csv"), []byte(
			"type,order_no,refund_no,channel_txn_id,amount,currency,occurred_at\n"+
				"payment,O-"+date+",,T-"+date+",1.00,USD,"+date+"T10:00:00Z\n"), 0o644)
	}
	cfg := config.Default()
	cfg.OutDir = t.TempDir()
	cfg.Schedule.LookbackDays = 5
	cfg.Channels = []config.Channel{{Name: "shop", Format: "csv", TimeZone: "UTC", Path: filepath.Join(inbox, "shop-{date}.csv")}}
	now := func() time.Time { return time.Date(2026, 11, 28, 16, 0, 0, 0, time.UTC) }

	var wg sync.WaitGroup
	outs := make([]*bytes.Buffer, 2)
	for i := range outs {
		outs[i] = &bytes.Buffer{}
		replica, err := ledger.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer replica.Close()
		cfg.LockPoll = config.Duration(20 * time.Millisecond)
		job := &nightly.Job{DB: replica, Notifier: reports.NewPrintNotifier(outs[i]), Config: cfg, Now: now}
		s := &nightly.Scheduler{Config: cfg, Job: job, Now: now}
		wg.Add(1)
		go func() { defer wg.Done(); s.Tick(context.Background()) }()
	}
	wg.Wait()
	var runs, succeeded int
	db.Pool().QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE status = 'SUCCEEDED') FROM runs`).Scan(&runs, &succeeded)
	alerts := strings.Count(outs[0].String()+outs[1].String(), "Reconciliation shop")
	overdue := strings.Count(outs[0].String()+outs[1].String(), "Not arrived")
	if runs != 3 || succeeded != 3 || alerts != 3 || overdue != 2 {
		t.Errorf("two replicas: %d runs (%d succeeded), %d run alerts, %d overdue alerts; want 3, 3, 3 and 2 (the 23rd and 24th never came)",
			runs, succeeded, alerts, overdue)
	}
	t.Logf("figures: two replicas ticking at once: %d runs for 3 dates, %d run alerts, %d overdue alert", runs, alerts, overdue)
}

// TestReviewPastTheWorkbookLimit: more review lines than the workbook is
// configured to hold: it holds the first, and the full CSV export is
// written beside it and named in summary.json.
func TestReviewPastTheWorkbookLimit(t *testing.T) {
	_, dsn, bill := setup(t)
	cfg := writeConfig(t, map[string]any{"review_max_lines": 2})
	c := newCLI(nil)
	out := t.TempDir()
	if code := c.run(t, runArgs(dsn, bill, out, "--config", cfg)...); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, c.errb)
	}
	raw, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	var s struct {
		ReviewLines int    `json:"review_lines"`
		ReviewCSV   string `json:"review_csv"`
	}
	json.Unmarshal(raw, &s)
	if s.ReviewLines != 6 || s.ReviewCSV != "review-wechatpay-2026-11-28.csv" {
		t.Fatalf("summary: review_lines %d, review_csv %q; want 6 and the CSV", s.ReviewLines, s.ReviewCSV)
	}
	b, err := os.ReadFile(filepath.Join(out, s.ReviewCSV))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != 7 {
		t.Errorf("CSV: %d lines, want header + 6", lines)
	}
	f, err := excelize.OpenFile(filepath.Join(out, "review-wechatpay-2026-11-28.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rows, _ := f.GetRows("Review"); len(rows) != 3 {
		t.Errorf("workbook Review sheet: %d rows, want header + 2", len(rows))
	}
}
