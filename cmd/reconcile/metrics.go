package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/metrics"
	"reconcile/reports"
)

// MetricsConfig turns on the Prometheus metrics and health check of
// `reconcile schedule`.
type MetricsConfig struct {
	// Listen is the address /metrics and /healthz are served on, such as
	// "127.0.0.1:9464"; empty (the default) serves nothing.
	Listen string `json:"listen,omitempty"`
	// StaleAfter is how long the scheduler may show no sign of life before
	// /healthz fails (default 1h). It beats every few seconds while it waits
	// for a tick, but within a tick only between runs, so this must be
	// longer than the longest run.
	StaleAfter Duration `json:"stale_after,omitempty"`
}

const (
	defaultStaleAfter = time.Hour
	// idleBeat is how often the waiting scheduler shows it is alive.
	idleBeat = 10 * time.Second
	// pingTimeout bounds the database's answer to a health check: a probe
	// that waits longer than its own timeout says nothing useful.
	pingTimeout = 2 * time.Second
)

func (mc MetricsConfig) staleAfter() time.Duration {
	if mc.StaleAfter == 0 {
		return defaultStaleAfter
	}
	return time.Duration(mc.StaleAfter)
}

// problems lists what is wrong with the metrics settings, for Config.problems.
func (mc MetricsConfig) problems() []error {
	var errs []error
	if mc.Listen != "" {
		if err := checkListen(mc.Listen); err != nil {
			errs = append(errs, fieldErrorf("metrics.listen", "metrics.listen: %s", err))
		}
	}
	if mc.StaleAfter != 0 && time.Duration(mc.StaleAfter) < time.Minute {
		errs = append(errs, fieldErrorf("metrics.stale_after", "metrics.stale_after %s: want at least 1m",
			time.Duration(mc.StaleAfter)))
	}
	return errs
}

// checkListen refuses an address net.Listen would, before anything starts.
func checkListen(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s is not host:port (such as 127.0.0.1:9464, or :9464 for every interface)", reconcile.Quote(addr))
	}
	return nil
}

// observer feeds the metrics from a command's runs. A nil observer (metrics
// are off) does nothing, so the hooks in the scheduler and in run need no
// condition of their own.
type observer struct {
	m        *metrics.Metrics
	hb       *metrics.Heartbeat // the scheduler's; nil for a one-shot run
	channels []string
	now      func() time.Time
	made     time.Time
}

func (a *App) newObserver(channels []string) *observer {
	m := metrics.New()
	m.Init(channels...)
	return &observer{m: m, channels: channels, now: a.Now, made: time.Now()}
}

// scheduleObserver returns the scheduler's observer when metrics.listen
// is set, else nil; job's alerts that fail are counted from then on.
func (a *App) scheduleObserver(cfg Config, job *Job) *observer {
	if cfg.Metrics.Listen == "" {
		return nil
	}
	var names []string
	for _, ch := range cfg.Channels {
		names = append(names, ch.Name)
	}
	o := a.newObserver(names)
	o.hb = &metrics.Heartbeat{}
	job.Notifier = o.notifier(job.Notifier)
	return o
}

// runObserver returns the observer of `reconcile run --metrics-file PATH`,
// or nil without the flag.
func (a *App) runObserver(path string, specs []RunSpec) *observer {
	if path == "" {
		return nil
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Channel)
	}
	return a.newObserver(names)
}

// ran records a run of channel: one with a result succeeded, though its
// reports or alert may not have been delivered (err); one without failed.
func (o *observer) ran(channel string, res *reconcile.Result, err error, took time.Duration) {
	if o == nil {
		return
	}
	if res != nil {
		o.m.ObserveRun(res, o.now(), took)
		return
	}
	o.m.ObserveFailure(channel, o.now(), took)
}

// notStarted records the runs that could not start (the database could
// not be opened) as failed.
func (o *observer) notStarted(specs []RunSpec) {
	if o == nil {
		return
	}
	for _, s := range specs {
		o.m.ObserveFailure(s.Channel, o.now(), time.Since(o.made))
	}
}

// planned records, per configured channel, the files a tick found past
// their deadline.
func (o *observer) planned(due []Due) {
	if o == nil {
		return
	}
	overdue := map[string]int{}
	for _, d := range due {
		if d.Overdue {
			overdue[d.Spec.Channel]++
		}
	}
	for _, ch := range o.channels {
		o.m.SetOverdue(ch, overdue[ch])
	}
}

// tickStarted, beat and tickDone are the scheduler's signs of life within
// a tick.
func (o *observer) tickStarted() {
	if o != nil {
		o.hb.Begin()
	}
}

func (o *observer) beat() {
	if o != nil {
		o.hb.Beat()
	}
}

func (o *observer) tickDone() {
	if o != nil {
		o.hb.End()
	}
}

// writeFile writes the metrics file of a one-shot run, whatever the run's
// outcome err; a file that cannot be written fails the command, as a
// report that cannot be would.
func (o *observer) writeFile(path string, err error) error {
	if o == nil {
		return err
	}
	if werr := o.m.WriteTextfile(path); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// serve serves /metrics and /healthz on mc.Listen until the returned stop
// is called, and keeps the heartbeat going while the scheduler waits:
// alive returns once the scheduler's loop has answered. Nil observer: a
// no-op.
func (o *observer) serve(mc MetricsConfig, db *ledger.DB, alive func(), log *slog.Logger) (stop func(), err error) {
	if o == nil {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", mc.Listen)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	srv := &http.Server{Handler: o.m.Handler(o.health(db, mc.staleAfter(), log)), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "error", err)
		}
	}()
	done := make(chan struct{})
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		t := time.NewTicker(idleBeat)
		defer t.Stop()
		for {
			alive()
			o.hb.Idle()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	log.Info("metrics served", "metrics", "http://"+ln.Addr().String()+"/metrics",
		"healthz", "http://"+ln.Addr().String()+"/healthz")
	return func() {
		close(done)
		<-beating
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		<-served
	}, nil
}

// health is /healthz's check: the scheduler shows signs of life, and the
// database answers a ping in time. Its errors are fixed words: a driver's
// message can name the user, host and database of the DSN.
func (o *observer) health(db *ledger.DB, staleAfter time.Duration, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := o.hb.Check(staleAfter); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, pingTimeout)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			log.Debug("health check: database ping failed", "error", err)
			if ctx.Err() != nil {
				return fmt.Errorf("database did not answer a ping within %s", pingTimeout)
			}
			return errors.New("database unreachable")
		}
		return nil
	}
}

// notifier wraps n so that each alert that could not be sent is counted,
// under the channel its context names (see alertFor).
func (o *observer) notifier(n reports.Notifier) reports.Notifier {
	if o == nil {
		return n
	}
	return countingNotifier{next: n, m: o.m}
}

type countingNotifier struct {
	next reports.Notifier
	m    *metrics.Metrics
}

func (n countingNotifier) Notify(ctx context.Context, msg reports.Message, attachment string, d *reports.Delivery) error {
	err := n.next.Notify(ctx, msg, attachment, d)
	if err != nil {
		n.m.AlertFailed(alertChannel(ctx))
	}
	return err
}

type alertChannelKey struct{}

// alertFor names the channel the alerts sent under ctx are about: a
// message does not say, and the count of failed alerts is per channel.
func alertFor(ctx context.Context, channel string) context.Context {
	return context.WithValue(ctx, alertChannelKey{}, channel)
}

func alertChannel(ctx context.Context) string {
	ch, _ := ctx.Value(alertChannelKey{}).(string)
	return ch
}
