package main

import (
	"context"

	"reconcile/config"
	"reconcile/metrics"
	"reconcile/nightly"
	"reconcile/reports"
)

// scheduleObserver returns the scheduler's observer when metrics.listen
// is set, else nil; job's alerts that fail are counted from then on.
func (a *App) scheduleObserver(cfg config.Config, job *nightly.Job) *metrics.Observer {
	if cfg.Metrics.Listen == "" {
		return nil
	}
	var names []string
	for _, ch := range cfg.Channels {
		names = append(names, ch.Name)
	}
	o := metrics.NewObserver(names, a.Now, true)
	job.Notifier = counted(job.Notifier, o)
	return o
}

// runObserver returns the observer of `reconcile run --metrics-file PATH`,
// or nil without the flag.
func (a *App) runObserver(path string, specs []nightly.RunSpec) *metrics.Observer {
	if path == "" {
		return nil
	}
	return metrics.NewObserver(specChannels(specs), a.Now, false)
}

func specChannels(specs []nightly.RunSpec) []string {
	var names []string
	for _, s := range specs {
		names = append(names, s.Channel)
	}
	return names
}

// counted wraps n so that each alert that could not be sent is counted by
// o, under the channel its context names (see alertFor); without an
// observer, n is left as it is.
func counted(n reports.Notifier, o *metrics.Observer) reports.Notifier {
	if o == nil {
		return n
	}
	return countingNotifier{next: n, o: o}
}

type countingNotifier struct {
	next reports.Notifier
	o    *metrics.Observer
}

func (n countingNotifier) Notify(ctx context.Context, msg reports.Message, attachment string, d *reports.Delivery) error {
	err := n.next.Notify(ctx, msg, attachment, d)
	if err != nil {
		n.o.AlertFailed(nightly.AlertChannel(ctx))
	}
	return err
}
