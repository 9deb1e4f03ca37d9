// Package nightly runs reconciliations: the lifecycle of a run (its
// record, lock, lease, replay and failure) around the stages of the
// night, each one call into the package that does the work (stages.go);
// the report over a date's shard runs; the one way an alert goes out
// (delivery.go); and the scheduler's ticks (schedule.go). The command
// line (cmd/reconcile) builds a Job from the config and calls it.
package nightly

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"reconcile"
	"reconcile/atomicfile"
	"reconcile/channelfeed"
	"reconcile/config"
	"reconcile/ledger"
	"reconcile/reports"
	"reconcile/terminal"
)

// Job runs reconciliations.
//
// A run is keyed by its channel, business date and the SHA-256 of its
// file. Runs of one channel and date take turns on a lock that dies with
// the process holding it; the run record's lease, renewed while the run
// works, lets a successor stop a holder that is stuck or cut off. The same
// file again returns the first run's result; a new file supersedes it.
type Job struct {
	DB       *ledger.DB // nil only when the database could not be opened
	Notifier reports.Notifier
	// Config is where a run's settings come from, defaults applied: the
	// lease, the nights remembered, the still-open days, the review lines
	// a workbook holds, the items an alert lists.
	Config config.Config
	Now    func() time.Time
	Log    *slog.Logger // nil: nothing is logged
	// Progress, when set, shows the stage a run is in (a manual run on a
	// terminal).
	Progress terminal.Progress
}

// Run reconciles one spec. A nil error means the run completed, whatever
// it found, or that the file's run had completed before (res.Replay). On
// failure the run is recorded as FAILED (unless dry), a summary.json says
// why, and one failure alert is sent.
func (j *Job) Run(ctx context.Context, spec RunSpec) (*reconcile.Result, error) {
	ctx = alertFor(ctx, spec.Channel)
	run := j.newRun(spec)
	spec.log = j.specLog(spec).With("run_id", run.ID)
	defer j.progress().Done()
	res, err := j.run(ctx, &run, spec)
	if err == nil {
		return res, nil
	}
	if res != nil {
		// The outcome is committed and only a report or the alert failed:
		// the run is not marked FAILED.
		spec.log.Warn("run succeeded, but its reports or alert were not delivered", "error", err)
		return res, err
	}
	j.fail(ctx, &run, spec, err)
	return nil, err
}

// discard is the logger of a Job built without one.
var discard = slog.New(slog.DiscardHandler)

func (j *Job) log() *slog.Logger {
	if j.Log == nil {
		return discard
	}
	return j.Log
}

// progress returns the job's Progress, never nil.
func (j *Job) progress() terminal.Progress {
	if j.Progress == nil {
		return terminal.None{}
	}
	return j.Progress
}

// specLog is the logger of a spec before it has a run id: its channel and
// business date, and its shard when it is one.
func (j *Job) specLog(spec RunSpec) *slog.Logger {
	l := j.log().With("channel", spec.Channel, "business_date", spec.Day.String())
	if !spec.Shard.Whole() {
		l = l.With("shard", spec.Shard.String())
	}
	return l
}

// Fail reports a run that could not even start (the database is
// unreachable): a summary.json that says why, and the failure alert.
func (j *Job) Fail(ctx context.Context, spec RunSpec, cause error) {
	ctx = alertFor(ctx, spec.Channel)
	run := j.newRun(spec)
	spec.log = j.specLog(spec).With("run_id", run.ID)
	j.fail(ctx, &run, spec, cause)
}

func (j *Job) newRun(spec RunSpec) reconcile.Run {
	return reconcile.Run{
		ID:        reconcile.NewRunID(),
		Channel:   spec.Channel,
		Day:       spec.Day,
		Format:    spec.Format,
		File:      spec.File,
		DryRun:    spec.DryRun,
		Forced:    spec.Force,
		Shard:     spec.Shard,
		Status:    reconcile.RunRunning,
		StartedAt: j.Now(),
	}
}

// newNight is the night of run, under the job's settings.
func (j *Job) newNight(run *reconcile.Run, spec RunSpec) *night {
	return &night{db: j.DB, cfg: j.Config, notifier: j.Notifier, now: j.Now, progress: j.progress(),
		run: run, spec: spec, log: spec.log}
}

// notStartedError marks a failure before the run record was written: there
// is no record to mark FAILED or to remember the alert by.
type notStartedError struct{ err error }

func (e *notStartedError) Error() string { return e.err.Error() }
func (e *notStartedError) Unwrap() error { return e.err }

func notStarted(err error) error { return &notStartedError{err} }

// run takes the run through its lifecycle: a dry run straight through
// the night; else the lock, the replay of a file reconciled before, the
// run record and its lease, the night up to its commit, and the delivery
// of its reports and alert once the lease is let go.
func (j *Job) run(ctx context.Context, run *reconcile.Run, spec RunSpec) (*reconcile.Result, error) {
	file, err := channelfeed.Fingerprint(spec.File)
	if err != nil {
		return nil, notStarted(err)
	}
	if j.Config.Lease <= 0 || j.Config.LockPoll <= 0 {
		// A Job is built from a loaded config: config.Load or
		// config.Default set every setting a run reads.
		return nil, notStarted(errors.New("nightly: the job's config has no lease or lock poll: build it from config.Load or config.Default"))
	}
	run.FileSHA256 = file.SHA256
	spec.fingerprint = &file
	n := j.newNight(run, spec)
	defer n.close()
	if spec.DryRun {
		return n.dryRun(ctx)
	}

	lock, err := j.DB.LockRun(ctx, spec.Channel, spec.Day, spec.Shard, time.Duration(j.Config.LockPoll))
	if err != nil {
		return nil, notStarted(err)
	}
	defer lock.Release()
	// Holding the lock, a run of this date still RUNNING has no process.
	if n, err := j.DB.AbandonRuns(ctx, spec.Channel, spec.Day, spec.Shard); err != nil {
		return nil, notStarted(err)
	} else if n > 0 {
		spec.log.Warn("runs left RUNNING by a stopped process recorded as FAILED", "abandoned", n)
	}
	if !spec.Force {
		prev, err := j.DB.LatestSuccess(ctx, spec.Channel, spec.Day, spec.Shard)
		switch {
		case err == nil && prev.Run.FileSHA256 == run.FileSHA256:
			return j.replay(ctx, prev, spec)
		case err != nil && !errors.Is(err, reconcile.ErrNotFound):
			return nil, notStarted(err)
		}
	}
	lease := time.Duration(j.Config.Lease)
	if err := j.DB.StartRun(ctx, *run, ledger.Lease{Holder: lock, For: lease}); err != nil {
		return nil, notStarted(err)
	}

	workCtx, release := lock.Hold(ctx, run.ID, lease)
	defer release()
	res, err := n.work(workCtx)
	if err != nil && context.Cause(workCtx) != nil && ctx.Err() == nil {
		err = context.Cause(workCtx) // the lease was lost
	}
	release()
	if err != nil {
		return nil, err
	}
	return res, n.deliver(ctx)
}

// replay returns an earlier run's result for the same file: its reports,
// marked as a replay, written to the out directory, and no second alert.
func (j *Job) replay(ctx context.Context, prev ledger.StoredRun, spec RunSpec) (*reconcile.Result, error) {
	name := prev.WorkbookName
	if name == "" {
		name = reports.WorkbookName(spec.Channel, spec.Day)
	}
	res, err := j.DB.LoadResult(ctx, prev.Run.ID)
	if err != nil {
		return nil, notStarted(err)
	}
	res.Replay = true
	// The run whose result this is: the run id of summary.json.
	j.specLog(spec).Info("file reconciled before: its run's result is returned again (--force re-evaluates)",
		"run_id", prev.Run.ID)
	if err := reports.WriteRun(spec.OutDir, reports.MarkReplay(prev.Summary), name, prev.Workbook); err != nil {
		return res, fmt.Errorf("run %s: writing its reports again failed: %w", prev.Run.ID, err)
	}
	return res, nil
}

// fail records a failed run, writes a summary.json that says why, and
// sends the failure alert once.
func (j *Job) fail(ctx context.Context, run *reconcile.Run, spec RunSpec, cause error) {
	var ns *notStartedError
	started := !errors.As(cause, &ns)
	run.Status = reconcile.RunFailed
	run.FinishedAt = j.Now()
	run.Error = reports.ErrorText(cause)
	spec.log.Error("run failed", "error", run.Error)
	// The failure must be recorded even when ctx was cancelled by a
	// signal: a short budget of its own, still tied to ctx's values.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var rec *alertRecord
	if started && !spec.DryRun && j.DB != nil {
		if err := j.DB.FailRun(wctx, run.ID, run.FinishedAt, run.Error); err != nil {
			spec.log.Warn("could not record the run as failed (the next run will)", "error", err)
		} else {
			rec = runAlert(j.DB, run.ID)
		}
	}
	if spec.OutDir != "" {
		if err := reports.WriteFailure(spec.OutDir, *run); err != nil {
			spec.log.Warn("failed run's summary.json not written", "error", err)
		}
	}
	// Without a run record to remember the alert by (the database is away,
	// or the run never started), it is said now, unclaimed.
	msg := reports.FailureMessage(*run, errors.New(run.Error))
	if _, err := sendOnce(wctx, j.Notifier, rec, msg, ""); err != nil {
		spec.log.Warn("failure alert not sent", "error", err)
	}
}

// Resend sends the alert of a finished run whose alert was not sent. It
// reports whether it sent one: false when it had been sent already.
func (j *Job) Resend(ctx context.Context, runID string) (bool, error) {
	stored, err := j.DB.StoredRun(ctx, runID)
	if err != nil {
		return false, err
	}
	if stored.AlertSent {
		return false, nil
	}
	ctx = alertFor(ctx, stored.Run.Channel)
	var msg reports.Message
	attachment := ""
	switch stored.Run.Status {
	case reconcile.RunSucceeded:
		res, err := j.DB.LoadResult(ctx, runID)
		if err != nil {
			return false, err
		}
		msg = reports.RunMessage(res, j.Config.Slack.Top)
		if len(stored.Workbook) > 0 {
			dir, err := os.MkdirTemp("", "reconcile-alert-")
			if err != nil {
				return false, err
			}
			defer os.RemoveAll(dir)
			if err := atomicfile.WriteFile(dir, stored.WorkbookName, stored.Workbook); err != nil {
				return false, err
			}
			attachment = filepath.Join(dir, stored.WorkbookName)
		}
	case reconcile.RunFailed:
		msg = reports.FailureMessage(stored.Run, errors.New(stored.Run.Error))
	default:
		return false, fmt.Errorf("run %s is still %s: nothing to alert yet", runID, stored.Run.Status)
	}
	return sendOnce(ctx, j.Notifier, runAlert(j.DB, runID), msg, attachment)
}
