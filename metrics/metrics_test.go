package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reconcile"
	"reconcile/metrics"
	"reconcile/metrics/metricstest"
)

// scrape gets /metrics from the handler and parses it.
func scrape(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: status %d\n%s", rec.Code, rec.Body)
	}
	return metricstest.Series(t, rec.Body)
}

func diff(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: missing, want %v", k, w)
		case g != w:
			t.Errorf("%s: got %v, want %v", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: got %v, want no such series", k, g)
		}
	}
}

// night is a result with a finding of most kinds: 600 CNY and 250 USD
// minor units at risk in the three that need review, one reversed
// automatically, one pending.
func night() *reconcile.Result {
	return &reconcile.Result{
		Run: reconcile.Run{Channel: "wechatpay", Status: reconcile.RunSucceeded},
		Counts: map[reconcile.Category]int{
			reconcile.Matched: 13, reconcile.AmountMismatch: 1, reconcile.MissingLocal: 1,
			reconcile.MissingChannel: 1, reconcile.DuplicatePayment: 1, reconcile.Pending: 1,
		},
		Findings: []reconcile.Finding{
			{Category: reconcile.AmountMismatch, Kind: reconcile.KindPayment, OrderNo: "A",
				HasChannel: true, ChannelAmount: 1000, Currency: "CNY", HasLocal: true, LocalAmount: 900, LocalCurrency: "CNY"},
			{Category: reconcile.MissingLocal, Kind: reconcile.KindPayment, OrderNo: "B",
				HasChannel: true, ChannelAmount: 500, Currency: "CNY"},
			{Category: reconcile.MissingChannel, Kind: reconcile.KindPayment, OrderNo: "C",
				HasLocal: true, LocalAmount: 250, LocalCurrency: "USD"},
			{Category: reconcile.DuplicatePayment, Kind: reconcile.KindPayment, OrderNo: "D",
				HasChannel: true, ChannelAmount: 300, Currency: "CNY", AutoReverse: true},
			{Category: reconcile.Pending, Kind: reconcile.KindPayment, OrderNo: "E",
				HasLocal: true, LocalAmount: 700, LocalCurrency: "CNY"},
		},
	}
}

// nightSeries is what night() observed at 2026-11-29T03:00:01.5Z, 2.25s
// long, gives.
func nightSeries() map[string]float64 {
	const ch = `channel="wechatpay"`
	when := float64(time.Date(2026, 11, 29, 3, 0, 1, 500e6, time.UTC).Unix()) + 0.5
	want := map[string]float64{
		"reconcile_last_run_timestamp_seconds{" + ch + "}":         when,
		"reconcile_last_success_timestamp_seconds{" + ch + "}":     when,
		"reconcile_last_run_success{" + ch + "}":                   1,
		"reconcile_last_run_duration_seconds{" + ch + "}":          2.25,
		"reconcile_findings_need_review{" + ch + "}":               3,
		"reconcile_auto_reversals{" + ch + "}":                     1,
		"reconcile_alert_failures_total{" + ch + "}":               0,
		"reconcile_money_at_risk_minor{" + ch + `,currency="CNY"}`: 600,
		"reconcile_money_at_risk_minor{" + ch + `,currency="USD"}`: 250,
	}
	counts := night().Counts
	for _, c := range reconcile.Categories {
		want[fmt.Sprintf("reconcile_findings{category=%q,%s}", c, ch)] = float64(counts[c])
	}
	return want
}

var nightEnd = time.Date(2026, 11, 29, 3, 0, 1, 500e6, time.UTC)

func TestObserveRun(t *testing.T) {
	m := metrics.New()
	m.ObserveRun(night(), nightEnd, 2250*time.Millisecond)
	diff(t, scrape(t, m), nightSeries())
}

func TestObserveLaterRuns(t *testing.T) {
	const ch = `channel="wechatpay"`
	later := nightEnd.Add(24 * time.Hour)
	tests := []struct {
		name    string
		observe func(m *metrics.Metrics)
		change  map[string]float64 // series that differ from nightSeries; -1 for gone
	}{{
		name: "failure keeps the findings of the last success",
		observe: func(m *metrics.Metrics) {
			m.ObserveFailure("wechatpay", later, 3*time.Second)
		},
		change: map[string]float64{
			"reconcile_last_run_timestamp_seconds{" + ch + "}": float64(later.Unix()) + 0.5,
			"reconcile_last_run_success{" + ch + "}":           0,
			"reconcile_last_run_duration_seconds{" + ch + "}":  3,
		},
	}, {
		name: "a currency no longer at risk loses its series",
		observe: func(m *metrics.Metrics) {
			res := night()
			res.Findings = res.Findings[1:2] // only the missing_local: 500 CNY
			res.Counts = map[reconcile.Category]int{reconcile.MissingLocal: 1}
			m.ObserveRun(res, later, time.Second)
		},
		change: map[string]float64{
			"reconcile_last_run_timestamp_seconds{" + ch + "}":            float64(later.Unix()) + 0.5,
			"reconcile_last_success_timestamp_seconds{" + ch + "}":        float64(later.Unix()) + 0.5,
			"reconcile_last_run_duration_seconds{" + ch + "}":             1,
			"reconcile_findings_need_review{" + ch + "}":                  1,
			"reconcile_auto_reversals{" + ch + "}":                        0,
			"reconcile_money_at_risk_minor{" + ch + `,currency="CNY"}`:    500,
			"reconcile_money_at_risk_minor{" + ch + `,currency="USD"}`:    -1,
			`reconcile_findings{category="matched",` + ch + "}":           0,
			`reconcile_findings{category="amount_mismatch",` + ch + "}":   0,
			`reconcile_findings{category="missing_channel",` + ch + "}":   0,
			`reconcile_findings{category="duplicate_payment",` + ch + "}": 0,
			`reconcile_findings{category="pending",` + ch + "}":           0,
		},
	}, {
		name: "alert failures, overdue files and a second channel",
		observe: func(m *metrics.Metrics) {
			m.Init("stripe")
			m.AlertFailed("wechatpay")
			m.AlertFailed("wechatpay")
			m.SetOverdue("wechatpay", 0)
			m.SetOverdue("stripe", 2)
		},
		change: map[string]float64{
			"reconcile_alert_failures_total{" + ch + "}":       2,
			`reconcile_alert_failures_total{channel="stripe"}`: 0,
			"reconcile_files_overdue{" + ch + "}":              0,
			`reconcile_files_overdue{channel="stripe"}`:        2,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New()
			m.ObserveRun(night(), nightEnd, 2250*time.Millisecond)
			tt.observe(m)
			want := nightSeries()
			for k, v := range tt.change {
				if v == -1 {
					delete(want, k)
				} else {
					want[k] = v
				}
			}
			diff(t, scrape(t, m), want)
		})
	}
}

func TestWriteTextfile(t *testing.T) {
	m := metrics.New()
	m.ObserveRun(night(), nightEnd, 2250*time.Millisecond)
	m.SetOverdue("wechatpay", 1)
	path := filepath.Join(t.TempDir(), "reconcile.prom")
	if err := m.WriteTextfile(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := nightSeries()
	want[`reconcile_files_overdue{channel="wechatpay"}`] = 1
	diff(t, metricstest.Series(t, strings.NewReader(string(b))), want)
	// node_exporter has Go and process metrics of its own: a file that
	// repeated them would make its scrape fail.
	if strings.Contains(string(b), "go_goroutines") || strings.Contains(string(b), "process_") {
		t.Errorf("the textfile holds runtime metrics:\n%s", b)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("textfile mode: got %v (%v), want 0644 so node_exporter can read it", fi.Mode(), err)
	}

	if err := m.WriteTextfile(filepath.Join(t.TempDir(), "no", "such", "dir", "x.prom")); err == nil ||
		!strings.Contains(err.Error(), "x.prom") {
		t.Errorf("unwritable path: got %v, want an error naming the file", err)
	}
}

func TestHandler(t *testing.T) {
	tests := []struct {
		name       string
		health     func(context.Context) error
		wantStatus int
		wantBody   string
	}{
		{"no check", nil, http.StatusOK, "ok\n"},
		{"healthy", func(context.Context) error { return nil }, http.StatusOK, "ok\n"},
		{"unhealthy, one line", func(context.Context) error {
			return errors.New("database did not answer a ping within 2s\nsecond line")
		}, http.StatusServiceUnavailable, "database did not answer a ping within 2s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(metrics.New().Handler(tt.health))
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || string(body) != tt.wantBody {
				t.Errorf("/healthz: got %d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
		})
	}

	m := metrics.New()
	m.ObserveRun(night(), nightEnd, time.Second)
	srv := httptest.NewServer(m.Handler(nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`reconcile_findings{category="amount_mismatch",channel="wechatpay"} 1`, "go_goroutines", "# HELP reconcile_money_at_risk_minor"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if resp, err := http.Post(srv.URL+"/healthz", "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: got %v %v, want 405", resp.StatusCode, err)
	}
}

func TestHeartbeat(t *testing.T) {
	start := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		steps func(h *metrics.Heartbeat, at func(time.Duration))
		want  string // "" for healthy, else a part of the error
	}{
		{"never beat", func(*metrics.Heartbeat, func(time.Duration)) {}, "has not started"},
		{"waiting, recent", func(h *metrics.Heartbeat, at func(time.Duration)) {
			h.Idle()
			at(59 * time.Second)
		}, ""},
		{"waiting, stale", func(h *metrics.Heartbeat, at func(time.Duration)) {
			h.Idle()
			at(61 * time.Second)
		}, "no sign of life for 1m1s"},
		{"tick progressing", func(h *metrics.Heartbeat, at func(time.Duration)) {
			h.Begin()
			at(50 * time.Second)
			h.Beat()
			at(100 * time.Second)
		}, ""},
		{"a stuck tick is not vouched for by the waiting loop", func(h *metrics.Heartbeat, at func(time.Duration)) {
			h.Begin()
			at(30 * time.Second)
			h.Idle()
			at(70 * time.Second)
			h.Idle()
		}, "a tick has made no progress for 1m10s"},
		{"after the tick, waiting again", func(h *metrics.Heartbeat, at func(time.Duration)) {
			h.Begin()
			at(90 * time.Second)
			h.End()
			at(140 * time.Second)
			h.Idle()
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := start
			h := &metrics.Heartbeat{Now: func() time.Time { return now }}
			tt.steps(h, func(d time.Duration) { now = start.Add(d) })
			err := h.Check(time.Minute)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want healthy", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestObserveFetch: the last fetch's time and result per channel, bytes
// added up, and only refusals and failures counted as failures.
func TestObserveFetch(t *testing.T) {
	m := metrics.New()
	at := time.Date(2026, 11, 29, 10, 5, 0, 0, time.UTC)
	m.ObserveFetch("wechatpay", "saved", 1200, at)
	m.ObserveFetch("wechatpay", "unchanged", 0, at.Add(time.Hour))
	m.ObserveFetch("wechatpay", "refused", 0, at.Add(2*time.Hour))
	m.ObserveFetch("stripe", "not_ready", 0, at)
	got := scrape(t, m)
	want := map[string]float64{
		`reconcile_fetch_last_timestamp_seconds{channel="wechatpay"}`: float64(at.Add(2 * time.Hour).Unix()),
		`reconcile_fetch_last_timestamp_seconds{channel="stripe"}`:    float64(at.Unix()),
		`reconcile_fetch_bytes_total{channel="wechatpay"}`:            1200,
		`reconcile_fetch_bytes_total{channel="stripe"}`:               0,
		`reconcile_fetch_failures_total{channel="wechatpay"}`:         1,
		`reconcile_fetch_failures_total{channel="stripe"}`:            0,
	}
	for _, ch := range []string{"wechatpay", "stripe"} {
		last := map[string]string{"wechatpay": "refused", "stripe": "not_ready"}[ch]
		for _, r := range metrics.FetchResults {
			v := 0.0
			if r == last {
				v = 1
			}
			want[fmt.Sprintf(`reconcile_fetch_last_result{channel=%q,result=%q}`, ch, r)] = v
		}
	}
	for k := range got {
		if !strings.HasPrefix(k, "reconcile_fetch_") {
			delete(got, k)
		}
	}
	diff(t, got, want)
}
