package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
	"reconcile/config"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
	"reconcile/metrics/metricstest"
	"reconcile/reports/slacktest"
)

// checkRunSeries checks that the metrics of channel's last run are those of
// the run whose summary.json is in dir: every category's count, the
// findings needing review, the reversals and the money at risk.
func checkRunSeries(t *testing.T, got map[string]float64, channel, dir string) {
	t.Helper()
	s := readSummary(t, dir)
	checkCounts(t, s.Counts)
	ch := fmt.Sprintf("channel=%q", channel)
	want := map[string]float64{
		"reconcile_last_run_success{" + ch + "}":     1,
		"reconcile_findings_need_review{" + ch + "}": float64(s.NeedsReview),
		"reconcile_auto_reversals{" + ch + "}":       float64(s.AutoReversed),
	}
	for _, c := range reconcile.Categories {
		want[fmt.Sprintf("reconcile_findings{category=%q,%s}", c, ch)] = float64(s.Counts[string(c)])
	}
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var risk struct {
		MoneyAtRisk map[string]string `json:"money_at_risk"`
	}
	if err := json.Unmarshal(raw, &risk); err != nil {
		t.Fatal(err)
	}
	if len(risk.MoneyAtRisk) == 0 {
		t.Fatalf("summary.json has no money at risk to compare with:\n%s", raw)
	}
	for cur, amount := range risk.MoneyAtRisk {
		minor, err := reconcile.ParseAmount(amount, cur)
		if err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprintf("reconcile_money_at_risk_minor{%s,currency=%q}", ch, cur)] = float64(minor)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: got %v (present: %v), want %v", k, g, ok, w)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "reconcile_money_at_risk_minor{") && want[k] == 0 {
			t.Errorf("%s: a currency summary.json does not have at risk", k)
		}
	}
	if got["reconcile_last_run_duration_seconds{"+ch+"}"] <= 0 {
		t.Errorf("last run duration: got %v, want more than 0", got["reconcile_last_run_duration_seconds{"+ch+"}"])
	}
}

// freeAddr returns a loopback address no one listens on just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestScheduleMetricsAndHealthz runs `reconcile schedule --metrics-listen`
// as a user does, scrapes /metrics over HTTP once a tick has run, and
// checks /healthz before and after the database goes away.
func TestScheduleMetricsAndHealthz(t *testing.T) {
	db, dsn, bill := setup(t)
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	b, _ := os.ReadFile(bill)
	// The 28th's file is there; the 27th's is not, and is past its deadline.
	os.WriteFile(filepath.Join(inbox, "20261128_ALL.csv"), b, 0o644)
	cfgPath := writeConfig(t, map[string]any{
		"out_dir":  filepath.Join(dir, "out"),
		"schedule": map[string]any{"spec": "@every 1s", "time_zone": "Asia/Shanghai", "lookback_days": 2},
		"channels": []map[string]string{{"name": "wechatpay", "format": "wechatpay",
			"path": filepath.Join(inbox, "{yyyymmdd}_ALL.csv"), "time_zone": "Asia/Shanghai"}},
	})
	// Slack refuses every alert: each is counted as failed.
	slack := slacktest.NewServer(t)
	slack.Always(slacktest.Webhook, slacktest.Reply{Status: http.StatusBadRequest})

	addr := freeAddr(t)
	c := newCLI(map[string]string{"RECONCILE_DATABASE_URL": dsn, "SLACK_WEBHOOK_URL": slack.WebhookURL()})
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.FixedZone("CST", 8*3600))
	c.app.Now = func() time.Time { return now }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- c.app.Main(ctx, []string{"schedule", "--config", cfgPath, "--metrics-listen", addr}) }()
	stop := func() {
		t.Helper()
		cancel()
		select {
		case code := <-done:
			if code != ExitOK {
				t.Errorf("schedule exit: got %d, want 0", code)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("schedule did not stop after its context was cancelled")
		}
	}

	var got map[string]float64
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, body, err := get("http://" + addr + "/metrics"); err == nil && code == http.StatusOK {
			got = metricstest.Series(t, strings.NewReader(body))
			if _, ok := got[`reconcile_last_run_success{channel="wechatpay"}`]; ok {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("no run showed in /metrics within 30s; got %v\nstderr:\n%s", got, c.errb)
		}
		time.Sleep(100 * time.Millisecond)
	}
	checkRunSeries(t, got, "wechatpay", filepath.Join(dir, "out", "2026-11-28", "wechatpay"))
	if got, want := got[`reconcile_last_run_timestamp_seconds{channel="wechatpay"}`], float64(now.Unix()); got != want {
		t.Errorf("last run time: got %v, want %v (the app's clock)", got, want)
	}
	if got := got[`reconcile_files_overdue{channel="wechatpay"}`]; got != 1 {
		t.Errorf("files overdue: got %v, want 1 (the 27th's)", got)
	}
	// The run's alert and the overdue file's, at least; resends add more.
	if got := got[`reconcile_alert_failures_total{channel="wechatpay"}`]; got < 2 {
		t.Errorf("alert failures: got %v, want at least 2", got)
	}

	if code, body, err := get("http://" + addr + "/healthz"); err != nil || code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: got %d %q (%v), want 200 ok", code, body, err)
	}

	// Take the test's database away, as an outage would: no new
	// connections, and the scheduler's are ended. It is done from the
	// server's own database, and only when the test has a database of its
	// own (not a schema in a shared one).
	var name, adminName string
	if err := db.Pool().QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	admin, err := ledger.Open(ctx, ledgertest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.Pool().QueryRow(ctx, "SELECT current_database()").Scan(&adminName); err != nil {
		t.Fatal(err)
	}
	if name == adminName {
		stop()
		t.Skip("the test has a schema, not a database, of its own: /healthz's 503 is not checked")
	}
	ident := pgx.Identifier{name}.Sanitize()
	if err := admin.Exec(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS false; "+
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+name+"'"); err != nil {
		stop()
		t.Skipf("cannot take the database away on this server (%v): /healthz's 503 is not checked", err)
	}
	var code int
	var body string
	deadline = time.Now().Add(15 * time.Second)
	for {
		var err error
		code, body, err = get("http://" + addr + "/healthz")
		if err == nil && code == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != http.StatusServiceUnavailable || body != "database unreachable\n" {
		t.Errorf("/healthz without a database: got %d %q, want 503 \"database unreachable\"", code, body)
	}
	if strings.Contains(body, name) || strings.Contains(body, "user=") || strings.Contains(body, "host=") {
		t.Errorf("/healthz shows the DSN: %q", body)
	}

	stop()
	if _, _, err := get("http://" + addr + "/healthz"); err == nil {
		t.Errorf("the metrics server still answers after the schedule stopped")
	}
}

// TestRunMetricsFile: `reconcile run --metrics-file` writes the gauges of
// its runs for node_exporter's textfile collector, for a run that failed
// too; a file it cannot write fails the command.
func TestRunMetricsFile(t *testing.T) {
	_, dsn, bill := setup(t)
	c := newCLI(nil)
	out := t.TempDir()
	prom := filepath.Join(t.TempDir(), "reconcile.prom")
	if code := c.run(t, runArgs(dsn, bill, out, "--metrics-file", prom)...); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, c.errb)
	}
	f, err := os.Open(prom)
	if err != nil {
		t.Fatal(err)
	}
	got := metricstest.Series(t, f)
	f.Close()
	checkRunSeries(t, got, "wechatpay", out)
	if got := got[`reconcile_alert_failures_total{channel="wechatpay"}`]; got != 0 {
		t.Errorf("alert failures: got %v, want 0 (the alert is printed)", got)
	}

	t.Run("database unreachable", func(t *testing.T) {
		prom := filepath.Join(t.TempDir(), "reconcile.prom")
		dsn := "postgres://reconciler:s3cret-pw@localhost:1/recon?connect_timeout=2&sslmode=disable"
		if code := c.run(t, runArgs(dsn, bill, t.TempDir(), "--metrics-file", prom)...); code != ExitFailed {
			t.Fatalf("exit %d, want %d\n%s", code, ExitFailed, c.errb)
		}
		b, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		got := metricstest.Series(t, strings.NewReader(string(b)))
		if v, ok := got[`reconcile_last_run_success{channel="wechatpay"}`]; !ok || v != 0 {
			t.Errorf("last run success: got %v (present: %v), want 0", v, ok)
		}
		if _, ok := got[`reconcile_findings{category="matched",channel="wechatpay"}`]; ok {
			t.Errorf("a failed run reports findings:\n%s", b)
		}
		if strings.Contains(string(b), "s3cret-pw") {
			t.Errorf("the password leaked into the metrics file")
		}
	})

	t.Run("unwritable file", func(t *testing.T) {
		prom := filepath.Join(t.TempDir(), "no-such-dir", "reconcile.prom")
		code := c.run(t, runArgs(dsn, bill, t.TempDir(), "--metrics-file", prom)...)
		if code != ExitFailed || !strings.Contains(c.errb.String(), prom) {
			t.Errorf("exit %d, want %d and the path named\n%s", code, ExitFailed, c.errb)
		}
	})
}

func TestMetricsConfig(t *testing.T) {
	tests := []struct {
		name    string
		metrics map[string]any
		want    string // part of the error; "" for none
	}{
		{"off", nil, ""},
		{"loopback", map[string]any{"listen": "127.0.0.1:9464"}, ""},
		{"every interface", map[string]any{"listen": ":9464", "stale_after": "2h"}, ""},
		{"no port", map[string]any{"listen": "9464"}, `metrics.listen: "9464" is not host:port`},
		{"stale too soon", map[string]any{"stale_after": "10s"}, "metrics.stale_after 10s: want 1m to 168h"},
		{"unknown key", map[string]any{"address": ":9464"}, "address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := map[string]any{}
			if tt.metrics != nil {
				cfg["metrics"] = tt.metrics
			}
			_, err := config.Load(writeConfig(t, cfg))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error with %q", err, tt.want)
			}
		})
	}

	c := newCLI(map[string]string{"RECONCILE_DATABASE_URL": "postgres://x@localhost:1/x"})
	cfg := writeConfig(t, map[string]any{"channels": []map[string]string{{"name": "shop", "format": "csv", "path": "x"}}})
	if code := c.run(t, "schedule", "--config", cfg, "--metrics-listen", "localhost"); code != ExitUsage ||
		!strings.Contains(c.errb.String(), "--metrics-listen") {
		t.Errorf("bad --metrics-listen: exit %d, want %d naming the flag\n%s", code, ExitUsage, c.errb)
	}
	if _, err := config.Load("../../reconcile.example.json"); err != nil {
		t.Errorf("example config: %v", err)
	}
}
