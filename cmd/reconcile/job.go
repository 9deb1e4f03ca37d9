package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/compensate"
	"reconcile/ledger"
	"reconcile/matcher"
	"reconcile/reports"
)

// RunSpec is one reconciliation to do: a channel, a business date, a file.
type RunSpec struct {
	Channel string
	Format  string
	File    string
	Day     reconcile.BusinessDay
	OutDir  string
	DryRun  bool
	// Feed carries the channel's parser settings (Stripe metadata keys, a
	// column mapping); its Location is the business day's.
	Feed channelfeed.Options
}

// Parse returns the parser options of the run.
func (s RunSpec) Parse() channelfeed.Options {
	o := s.Feed
	o.Location = s.Day.Location
	return o
}

// Job runs reconciliations: parse, load, match, persist, report, alert.
type Job struct {
	DB       *ledger.DB // nil only when the database could not be opened
	Notifier reports.Notifier
	Now      func() time.Time
	Log      io.Writer // progress and warnings, one line each
	Top      int       // items needing review listed in the alert
}

// Run reconciles one spec. A nil error means the run completed, whatever
// it found. On failure the run is recorded as FAILED (unless dry), a
// summary.json says why, and one failure alert is sent.
func (j *Job) Run(ctx context.Context, spec RunSpec) (*reconcile.Result, error) {
	run := j.newRun(spec)
	res, err := j.run(ctx, &run, spec)
	if err == nil || res != nil {
		// With a result, the outcome is committed and only a report or the
		// alert failed: the run is not marked FAILED.
		return res, err
	}
	j.fail(ctx, &run, spec, err)
	return nil, err
}

// Fail reports a run that could not even start (the database is
// unreachable): a summary.json that says why, and the failure alert.
func (j *Job) Fail(ctx context.Context, spec RunSpec, cause error) {
	run := j.newRun(spec)
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
		Status:    reconcile.RunRunning,
		StartedAt: j.Now(),
	}
}

func (j *Job) run(ctx context.Context, run *reconcile.Run, spec RunSpec) (*reconcile.Result, error) {
	if !spec.DryRun {
		if err := j.DB.StartRun(ctx, *run); err != nil {
			return nil, err
		}
	}

	m := matcher.New(spec.Day)
	info, err := channelfeed.ParseFile(ctx, spec.File, spec.Format, spec.Parse(), func(tx reconcile.Transaction) error {
		m.AddRow(tx)
		return nil
	})
	if err != nil {
		return nil, err
	}
	run.FileSHA256 = info.SHA256

	orders, refunds := m.Keys()
	if _, err := j.DB.LoadLocal(ctx, spec.Channel, spec.Day, orders, refunds, func(r reconcile.LocalRecord) error {
		m.AddLocal(r)
		return nil
	}); err != nil {
		return nil, err
	}
	mres := m.Result()

	run.Status = reconcile.RunSucceeded
	run.FinishedAt = j.Now()
	res := &reconcile.Result{
		Run:         *run,
		ChannelRows: mres.ChannelRows,
		BatchRows:   mres.BatchRows,
		LocalRows:   mres.LocalRows,
		Counts:      mres.Counts,
		Findings:    mres.Findings,
		Journals:    compensate.Plan(spec.Channel, mres.Findings),
	}
	if !spec.DryRun {
		posted, err := j.DB.CompleteRun(ctx, res)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(j.Log, "run %s: %d findings, %d reversal journals (%d new)\n",
			run.ID, len(res.Findings), len(res.Journals), posted)
	}

	workbook, err := j.writeReports(spec.OutDir, res)
	if err != nil {
		// The run's outcome is committed; a report that cannot be written
		// is reported, not a reason to pretend the run failed.
		return res, fmt.Errorf("run %s succeeded, but writing its reports failed: %w", run.ID, err)
	}
	if err := j.Notifier.Notify(ctx, reports.RunMessage(res, j.Top), workbook); err != nil {
		return res, fmt.Errorf("run %s succeeded, but its alert was not sent: %w", run.ID, err)
	}
	return res, nil
}

func (j *Job) writeReports(dir string, res *reconcile.Result) (workbook string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := reports.WorkbookName(res.Run.Channel, res.Run.Day)
	workbook = filepath.Join(dir, name)
	if err := reports.WriteWorkbook(workbook, res); err != nil {
		return "", err
	}
	if err := reports.WriteSummary(filepath.Join(dir, "summary.json"), reports.NewSummary(res, name)); err != nil {
		return "", err
	}
	return workbook, nil
}

// fail records a failed run, writes a summary.json that says why, and
// sends the failure alert.
func (j *Job) fail(ctx context.Context, run *reconcile.Run, spec RunSpec, cause error) {
	run.Status = reconcile.RunFailed
	run.FinishedAt = j.Now()
	run.Error = reports.RedactSecrets(cause.Error())
	// The failure must be recorded even when ctx was cancelled by a
	// signal: a short budget of its own, still tied to ctx's values.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if !spec.DryRun && j.DB != nil && run.ID != "" {
		if err := j.DB.FailRun(wctx, run.ID, run.FinishedAt, run.Error); err != nil && !errors.Is(err, reconcile.ErrNotFound) {
			fmt.Fprintf(j.Log, "warning: could not record run %s as failed: %s\n", run.ID, reports.RedactSecrets(err.Error()))
		}
	}
	if spec.OutDir != "" {
		res := &reconcile.Result{Run: *run, Counts: map[reconcile.Category]int{}}
		for _, c := range reconcile.Categories {
			res.Counts[c] = 0
		}
		if err := os.MkdirAll(spec.OutDir, 0o755); err == nil {
			s := reports.NewSummary(res, "")
			s.Error = run.Error
			if err := reports.WriteSummary(filepath.Join(spec.OutDir, "summary.json"), s); err != nil {
				fmt.Fprintf(j.Log, "warning: %s\n", err)
			}
		}
	}
	if err := j.Notifier.Notify(wctx, reports.FailureMessage(*run, errors.New(run.Error)), ""); err != nil {
		fmt.Fprintf(j.Log, "warning: failure alert not sent: %s\n", reports.RedactSecrets(err.Error()))
	}
}
