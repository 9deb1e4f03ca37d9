// Package metrics tells the people who run the job how it is doing, in
// Prometheus's terms: the outcome of each channel's last run (findings per
// category, automatic reversals, money at risk, how long it took), alerts
// that could not be sent, and files past their deadline. `reconcile
// schedule` serves them over HTTP next to a health check (/healthz); a
// one-shot `reconcile run` writes them to a file for node_exporter's
// textfile collector.
//
// The gauges describe the last run of each channel. A business date is not a
// label: one series per date would grow without bound, and the question an
// operator asks is "how did last night go".
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"reconcile"
)

// Metrics holds the job's metrics in a registry of its own, never the
// global default one, so that each test, and each command, starts from
// nothing.
type Metrics struct {
	reg *prometheus.Registry

	lastRun, lastSuccess, lastSuccessTime, duration *prometheus.GaugeVec
	findings, needReview, autoReversals, atRisk     *prometheus.GaugeVec
	overdue                                         *prometheus.GaugeVec
	alertFailures                                   *prometheus.CounterVec
	fetchLast, fetchResult                          *prometheus.GaugeVec
	fetchBytes, fetchFailures                       *prometheus.CounterVec

	mu sync.Mutex
	// currencies is, per channel, the currencies that have a money-at-risk
	// series: a currency at risk last time and not now loses its series.
	currencies map[string]map[string]bool
}

// New returns the job's metrics, none of them with a value yet.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), currencies: map[string]map[string]bool{}}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(g)
		return g
	}
	counter := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"channel"})
		m.reg.MustRegister(c)
		return c
	}
	m.lastRun = gauge("reconcile_last_run_timestamp_seconds",
		"When the channel's last run ended, whether it succeeded or failed (Unix time).", "channel")
	m.lastSuccess = gauge("reconcile_last_run_success",
		"1 when the channel's last run succeeded, 0 when it failed.", "channel")
	m.lastSuccessTime = gauge("reconcile_last_success_timestamp_seconds",
		"When the channel's last successful run ended (Unix time).", "channel")
	m.duration = gauge("reconcile_last_run_duration_seconds",
		"How long the channel's last run took, waiting for its turn included.", "channel")
	m.findings = gauge("reconcile_findings",
		"Findings of the channel's last successful run, per category; matched counts the keys that agree.",
		"channel", "category")
	m.needReview = gauge("reconcile_findings_need_review",
		"Findings of the channel's last successful run that a person must look at.", "channel")
	m.autoReversals = gauge("reconcile_auto_reversals",
		"Duplicates the channel's last successful run reversed automatically.", "channel")
	m.atRisk = gauge("reconcile_money_at_risk_minor",
		"Money at risk in the findings of the channel's last successful run that need review, as the alert "+
			"and summary.json count it, in minor units of the currency (cents; none for JPY): an integer, "+
			"exact up to 2^53.", "channel", "currency")
	m.overdue = gauge("reconcile_files_overdue",
		"Business dates of the lookback window whose settlement file is still absent past its deadline, "+
			"as of the scheduler's last tick.", "channel")
	m.alertFailures = counter("reconcile_alert_failures_total",
		"Alerts (of a run, a failure, an overdue file, a resend) that could not be sent, after their retries.")
	m.fetchLast = gauge("reconcile_fetch_last_timestamp_seconds",
		"When the job last asked the channel for a settlement file (Unix time).", "channel")
	m.fetchResult = gauge("reconcile_fetch_last_result",
		"1 for the result of the channel's last fetch, 0 for the others: "+strings.Join(FetchResults, ", ")+".",
		"channel", "result")
	m.fetchBytes = counter("reconcile_fetch_bytes_total",
		"Bytes of settlement files the job downloaded and put in place.")
	m.fetchFailures = counter("reconcile_fetch_failures_total",
		"Fetches that failed (refused, a file refused for its content, failing after their retries); not ready and no bill are not failures.")
	return m
}

// FetchResults are the results a fetch can have.
var FetchResults = []string{"saved", "unchanged", "not_ready", "no_bill", "refused", "bad_file", "failed"}

// FetchFailed reports whether a fetch's result is a failure: a refusal by
// the channel, a file the job refused (bad_file), or a failure that
// survived the retries. The fetch command exits 1 on these, and the
// failures counter counts them.
func FetchFailed(result string) bool {
	return result == "refused" || result == "bad_file" || result == "failed"
}

// ObserveFetch records a fetch of channel's file with its result (one of
// FetchResults) and the bytes it put in place.
func (m *Metrics) ObserveFetch(channel, result string, bytes int64, when time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fetchLast.WithLabelValues(channel).Set(unixSeconds(when))
	for _, r := range FetchResults {
		v := 0.0
		if r == result {
			v = 1
		}
		m.fetchResult.WithLabelValues(channel, r).Set(v)
	}
	m.fetchBytes.WithLabelValues(channel).Add(float64(bytes))
	m.fetchFailures.WithLabelValues(channel)
	if FetchFailed(result) {
		m.fetchFailures.WithLabelValues(channel).Inc()
	}
}

// Init gives the counters of the named channels a zero, so that rate() and
// increase() see the first failure, and a channel never run is listed.
func (m *Metrics) Init(channels ...string) {
	for _, ch := range channels {
		m.alertFailures.WithLabelValues(ch)
	}
}

// ObserveRun records a run that succeeded (a replay included: its result is
// the one the run returned), which ended at when and took took.
func (m *Metrics) ObserveRun(res *reconcile.Result, when time.Time, took time.Duration) {
	ch := res.Run.Channel
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended(ch, when, took)
	m.lastSuccess.WithLabelValues(ch).Set(1)
	m.lastSuccessTime.WithLabelValues(ch).Set(unixSeconds(when))
	for _, c := range res.Categories() {
		m.findings.WithLabelValues(ch, string(c)).Set(float64(res.Counts[c]))
	}
	m.needReview.WithLabelValues(ch).Set(float64(res.NeedsReview()))
	m.autoReversals.WithLabelValues(ch).Set(float64(res.AutoReversed()))

	// The one definition of money at risk is the domain's, which the alert
	// and summary.json use too. Its int64 becomes a float64 here, at the
	// edge, because a Prometheus sample is one.
	risk := res.AtRisk()
	for cur := range m.currencies[ch] {
		if _, ok := risk[cur]; !ok {
			m.atRisk.DeleteLabelValues(ch, cur)
		}
	}
	m.currencies[ch] = map[string]bool{}
	for cur, minor := range risk {
		m.atRisk.WithLabelValues(ch, cur).Set(float64(minor))
		m.currencies[ch][cur] = true
	}
	m.alertFailures.WithLabelValues(ch)
}

// ObserveFailure records a run of channel that failed, which ended at when
// and took took. The findings and money at risk stay those of the last
// successful run.
func (m *Metrics) ObserveFailure(channel string, when time.Time, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended(channel, when, took)
	m.lastSuccess.WithLabelValues(channel).Set(0)
	m.alertFailures.WithLabelValues(channel)
}

func (m *Metrics) ended(channel string, when time.Time, took time.Duration) {
	m.lastRun.WithLabelValues(channel).Set(unixSeconds(when))
	m.duration.WithLabelValues(channel).Set(took.Seconds())
}

// AlertFailed counts an alert of channel that could not be sent.
func (m *Metrics) AlertFailed(channel string) {
	m.alertFailures.WithLabelValues(channel).Inc()
}

// SetOverdue records how many of channel's files are past their deadline.
func (m *Metrics) SetOverdue(channel string, n int) {
	m.overdue.WithLabelValues(channel).Set(float64(n))
}

// unixSeconds keeps the sub-second part: a test clock may tick in
// milliseconds.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// Handler serves /metrics (the job's metrics, and the Go runtime's and the
// process's, which a daemon is expected to have) and /healthz: 200 "ok"
// when health returns nil, else 503 and the first line of its error. A nil
// health is always healthy.
func (m *Metrics) Handler(health func(context.Context) error) http.Handler {
	runtime := prometheus.NewRegistry()
	runtime.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(prometheus.Gatherers{m.reg, runtime}, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if health != nil {
			if err := health(r.Context()); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				line, _, _ := strings.Cut(err.Error(), "\n")
				fmt.Fprintln(w, line)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// WriteTextfile writes the job's metrics (not the runtime's, which
// node_exporter has of its own) to path for node_exporter's textfile
// collector: written to a temporary file beside it and renamed, so the
// collector never reads half a file. The collector reads *.prom files only.
func (m *Metrics) WriteTextfile(path string) error {
	if err := prometheus.WriteToTextfile(path, m.reg); err != nil {
		return fmt.Errorf("metrics file %s: %w", path, err)
	}
	return nil
}
