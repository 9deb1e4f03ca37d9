package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"reconcile"
)

const (
	// idleBeat is how often the waiting scheduler shows it is alive.
	idleBeat = 10 * time.Second
	// pingTimeout bounds the database's answer to a health check: a probe
	// that waits longer than its own timeout says nothing useful.
	pingTimeout = 2 * time.Second
)

// Observer feeds the metrics from a command's runs. A nil Observer
// (metrics are off) does nothing, so the hooks in the scheduler and in
// `reconcile run` need no condition of their own.
type Observer struct {
	m        *Metrics
	hb       *Heartbeat // the scheduler's; nil for a one-shot run
	channels []string
	now      func() time.Time
	made     time.Time
}

// NewObserver observes the runs of channels, at the times now gives;
// scheduler says it is the scheduler's, with a heartbeat for /healthz.
func NewObserver(channels []string, now func() time.Time, scheduler bool) *Observer {
	m := New()
	m.Init(channels...)
	o := &Observer{m: m, channels: channels, now: now, made: time.Now()}
	if scheduler {
		o.hb = &Heartbeat{}
	}
	return o
}

// Ran records a run of channel: one with a result succeeded, though its
// reports or alert may not have been delivered (err); one without failed.
func (o *Observer) Ran(channel string, res *reconcile.Result, err error, took time.Duration) {
	if o == nil {
		return
	}
	if res != nil {
		o.m.ObserveRun(res, o.now(), took)
		return
	}
	o.m.ObserveFailure(channel, o.now(), took)
}

// NotStarted records the runs of channels that could not start (the
// database could not be opened) as failed.
func (o *Observer) NotStarted(channels []string) {
	if o == nil {
		return
	}
	for _, ch := range channels {
		o.m.ObserveFailure(ch, o.now(), time.Since(o.made))
	}
}

// Fetched records a fetch of channel's file: its result (one of
// FetchResults) and the bytes put in place.
func (o *Observer) Fetched(channel, result string, bytes int64) {
	if o == nil {
		return
	}
	o.m.ObserveFetch(channel, result, bytes, o.now())
}

// Overdue records, per observed channel, how many files a tick found past
// their deadline (a channel not in overdue has none).
func (o *Observer) Overdue(overdue map[string]int) {
	if o == nil {
		return
	}
	for _, ch := range o.channels {
		o.m.SetOverdue(ch, overdue[ch])
	}
}

// AlertFailed counts an alert of channel that could not be sent.
func (o *Observer) AlertFailed(channel string) {
	if o != nil {
		o.m.AlertFailed(channel)
	}
}

// TickStarted, Beat and TickDone are the scheduler's signs of life within
// a tick.
func (o *Observer) TickStarted() {
	if o != nil {
		o.hb.Begin()
	}
}

func (o *Observer) Beat() {
	if o != nil {
		o.hb.Beat()
	}
}

func (o *Observer) TickDone() {
	if o != nil {
		o.hb.End()
	}
}

// WriteFile writes the metrics file of a one-shot run, whatever the run's
// outcome err; a file that cannot be written fails the command, as a
// report that cannot be would.
func (o *Observer) WriteFile(path string, err error) error {
	if o == nil {
		return err
	}
	if werr := o.m.WriteTextfile(path); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// Serve serves /metrics and /healthz on listen until the returned stop is
// called, and keeps the heartbeat going while the scheduler waits: alive
// returns once the scheduler's loop has answered. /healthz fails when the
// scheduler shows no sign of life for staleAfter, or ping fails. Nil
// Observer: a no-op.
func (o *Observer) Serve(listen string, staleAfter time.Duration, ping func(context.Context) error, alive func(), log *slog.Logger) (stop func(), err error) {
	if o == nil {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	srv := &http.Server{Handler: o.m.Handler(o.health(ping, staleAfter, log)), ReadHeaderTimeout: 10 * time.Second}
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
func (o *Observer) health(ping func(context.Context) error, staleAfter time.Duration, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := o.hb.Check(staleAfter); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, pingTimeout)
		defer cancel()
		if err := ping(ctx); err != nil {
			log.Debug("health check: database ping failed", "error", err)
			if ctx.Err() != nil {
				return fmt.Errorf("database did not answer a ping within %s", pingTimeout)
			}
			return errors.New("database unreachable")
		}
		return nil
	}
}
