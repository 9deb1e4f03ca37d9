package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
	// Force re-evaluates a file whose run already succeeded, instead of
	// returning that run's result.
	Force bool
	// Grace is the cut-off window of the channel (see matcher.Options).
	Grace time.Duration
	// Shard, when not the whole, limits the run to the keys of one shard;
	// `reconcile report` puts the shards' results together.
	Shard reconcile.Shard
	// Feed carries the channel's parser settings (Stripe metadata keys, a
	// column mapping); its Location is the business day's.
	Feed channelfeed.Options

	expectRows int // the file's line count, to size the index once
	// log is the run's logger: channel and business date attached, and
	// the run id once Job.Run has made one.
	log *slog.Logger
}

// Parse returns the parser options of the run.
func (s RunSpec) Parse() channelfeed.Options {
	o := s.Feed
	o.Location = s.Day.Location
	return o
}

// Job runs reconciliations: parse, load, match, persist, report, alert.
//
// A run is keyed by its channel, business date and the SHA-256 of its
// file. Runs of one channel and date take turns on a lock that dies with
// the process holding it; the run record's lease, renewed while the run
// works, lets a successor stop a holder that is stuck or cut off. The same
// file again returns the first run's result; a new file supersedes it.
type Job struct {
	DB       *ledger.DB // nil only when the database could not be opened
	Notifier reports.Notifier
	Now      func() time.Time
	Log      *slog.Logger // nil: nothing is logged
	Top      int          // items needing review listed in the alert
	// Progress, when set, shows the stage a run is in (a manual run on a
	// terminal).
	Progress Progress
	// Lease is how long a run holds its channel and date without renewing
	// (default 15 minutes); LockPoll how often a waiting run looks again.
	Lease    time.Duration
	LockPoll time.Duration
	// StillOpenDays: findings open longer than this are listed again in
	// the alert (default 3; negative: never).
	StillOpenDays int
	// MemoryDays is how many earlier business dates' files a run looks
	// back on for duplicates across nights (default 7).
	MemoryDays int
	// ReviewMaxLines bounds the review lines a workbook holds; past it the
	// workbook says where the full CSV export is (0: reports' default).
	ReviewMaxLines int
}

func (j *Job) memoryDays() int {
	if j.MemoryDays > 0 {
		return j.MemoryDays
	}
	return 7
}

const alertHold = 10 * time.Minute // how long a claim on sending an alert lasts

func (j *Job) lease() time.Duration {
	if j.Lease > 0 {
		return j.Lease
	}
	return 15 * time.Minute
}

func (j *Job) lockPoll() time.Duration {
	if j.LockPoll > 0 {
		return j.LockPoll
	}
	return time.Second
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

func (j *Job) log() *slog.Logger {
	if j.Log == nil {
		return discardLogger
	}
	return j.Log
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

// notStartedError marks a failure before the run record was written: there
// is no record to mark FAILED or to remember the alert by.
type notStartedError struct{ err error }

func (e *notStartedError) Error() string { return e.err.Error() }
func (e *notStartedError) Unwrap() error { return e.err }

func notStarted(err error) error { return &notStartedError{err} }

func (j *Job) run(ctx context.Context, run *reconcile.Run, spec RunSpec) (*reconcile.Result, error) {
	file, err := channelfeed.Fingerprint(spec.File)
	if err != nil {
		return nil, notStarted(err)
	}
	sha := file.SHA256
	run.FileSHA256 = sha
	spec.expectRows = file.Rows
	if spec.DryRun {
		return j.evaluate(ctx, ctx, run, spec, func() {})
	}

	lock, err := j.DB.LockRun(ctx, spec.Channel, spec.Day, spec.Shard, j.lockPoll())
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
		case err == nil && prev.Run.FileSHA256 == sha:
			return j.replay(ctx, prev, spec)
		case err != nil && !errors.Is(err, reconcile.ErrNotFound):
			return nil, notStarted(err)
		}
	}
	if err := j.DB.StartRun(ctx, *run, ledger.Lease{Holder: lock, For: j.lease()}); err != nil {
		return nil, notStarted(err)
	}

	// The lease is renewed while the run works; if it cannot be (the
	// connection is gone, or a successor took over), the run stops before
	// it could commit over its successor.
	workCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	beat, stopBeat := context.WithCancel(ctx)
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		t := time.NewTicker(j.lease() / 3)
		defer t.Stop()
		for {
			select {
			case <-beat.Done():
				return
			case <-t.C:
				if err := lock.Renew(beat, run.ID, j.lease()); err != nil && beat.Err() == nil {
					stop(fmt.Errorf("lost the run's lease: %w", err))
					return
				}
			}
		}
	}()
	committed := func() {
		stopBeat()
		<-beating
		lock.Release()
	}
	defer committed()
	res, err := j.evaluate(ctx, workCtx, run, spec, committed)
	if err != nil && res == nil && context.Cause(workCtx) != nil && ctx.Err() == nil {
		err = context.Cause(workCtx)
	}
	return res, err
}

// evaluate does the work of a run: parse, load, match, and, unless dry,
// commit and alert. The work up to the commit happens under workCtx, which
// ends if the run loses its lease; committed is called right after the
// commit; what follows it (reports, the alert) happens under ctx.
func (j *Job) evaluate(ctx, workCtx context.Context, run *reconcile.Run, spec RunSpec, committed func()) (*reconcile.Result, error) {
	ctx, outer := workCtx, ctx
	var stages []reconcile.Stage
	mark := time.Now()
	stage := func(name string) {
		now := time.Now()
		stages = append(stages, reconcile.Stage{Name: name, Took: now.Sub(mark)})
		mark = now
	}
	m := matcher.New(spec.Day, matcher.Options{Grace: spec.Grace, ExpectRows: spec.expectRows})
	progress := j.progress()
	progress.Stage("parse")
	var rowsRead int64
	info, err := parseAside(ctx, spec.File, spec.Format, spec.Parse(), func(tx reconcile.Transaction) {
		if rowsRead++; rowsRead%progressEvery == 0 {
			progress.Rows(rowsRead)
		}
		if !spec.Shard.Whole() {
			keyed := tx.Kind == reconcile.KindPayment || tx.Kind == reconcile.KindRefund
			// Rows without a key of ours (fees, unrecognised rows) belong
			// to the first shard, so they are counted once.
			if keyed && !spec.Shard.Has(tx.Key()) || !keyed && spec.Shard.Index != 0 {
				return
			}
		}
		m.AddRow(tx)
	})
	if err != nil {
		return nil, err
	}
	if info.SHA256 != run.FileSHA256 {
		return nil, fmt.Errorf("settlement file %s changed while it was being read: run again once it is complete", spec.File)
	}
	stage("parse")
	progress.Rows(rowsRead)
	spec.log.Debug("settlement file read", "file", spec.File, "format", spec.Format, "rows", rowsRead)
	progress.Stage("local records")

	// Earlier nights are merged by key hash: tonight's keys are listed so
	// now, while the local records do not yet take their memory.
	if remembers, err := j.DB.RemembersBefore(ctx, spec.Channel, spec.Day, j.memoryDays()); err != nil {
		return nil, err
	} else if remembers {
		m.SortKeys()
	}

	var localRead int64
	addLocal := func(r *reconcile.LocalRow) error {
		m.AddLocalRow(r)
		if localRead++; localRead%progressEvery == 0 {
			progress.Rows(localRead)
		}
		return nil
	}
	if _, err := j.DB.LoadWindow(ctx, spec.Channel, spec.Day, spec.Shard, addLocal); err != nil {
		return nil, err
	}
	orders, refunds := m.LocalKeys()
	if _, err := j.DB.LoadKeys(ctx, spec.Channel, spec.Day, orders, refunds, addLocal); err != nil {
		return nil, err
	}
	progress.Rows(localRead)
	stage("local records")
	progress.Stage("memory")
	if err := j.DB.MemoryBefore(ctx, spec.Channel, spec.Day, j.memoryDays(), m.MemoryParts, m.AddMemory); err != nil {
		return nil, err
	}
	// Only now is it known which keys do not simply match (a key settled on
	// an earlier night does not): their idempotency status is read.
	orders, refunds = m.IdemKeys()
	if err := j.DB.IdemStatuses(ctx, orders, refunds, func(k reconcile.Kind, key, status string) error {
		m.SetIdem(k, key, status)
		return nil
	}); err != nil {
		return nil, err
	}
	stage("memory")
	progress.Stage("match")
	pending, err := j.DB.PendingBefore(ctx, spec.Channel, spec.Day)
	if err != nil {
		return nil, err
	}
	for _, p := range pending {
		if spec.Shard.Has(p.Key()) {
			m.AddPending(p)
		}
	}
	reversed, err := j.DB.ReversedOnDate(ctx, spec.Channel, spec.Day, spec.Shard)
	if err != nil {
		return nil, err
	}
	for _, f := range reversed {
		m.AddReversed(f)
	}
	mres := m.Result()
	// The index is done with: its memory goes to the workbook step.
	memory := m.Memory()
	m = nil
	stage("match")
	progress.Stage("still open")
	for i := range mres.Findings {
		mres.Findings[i].Ref = fmt.Sprintf("%s-%04d", run.ID, i+1)
	}

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
	if spec.Shard.Whole() {
		if err := j.stillOpen(ctx, res); err != nil {
			return nil, err
		}
	}
	// The channel's earlier days for the workbook's Trend sheet; a dry run
	// reads them too, as it reads everything else.
	trend, err := j.DB.Trend(ctx, spec.Channel, spec.Day, reports.TrendDays-1)
	if err != nil {
		return nil, err
	}

	// The reports are made before the commit and kept with the run, so the
	// same file again gets exactly them back.
	name := reports.WorkbookName(spec.Channel, spec.Day)
	stage("still open")
	progress.Stage("commit")
	// The reports are made on the other core while the database writes
	// the findings, journals and memory; the commit waits for them.
	aside := renderAside(res, name, reports.WorkbookOptions{MaxLines: j.ReviewMaxLines, Trend: trend})
	defer aside.close()
	var rep *rendered
	waitReports := func() ([]byte, []byte, error) {
		r, err := aside.wait(ctx)
		if err != nil {
			return nil, nil, err
		}
		if r.err != nil {
			return nil, nil, fmt.Errorf("write reports: %w", r.err)
		}
		if rep == nil {
			rep = r.rep
			stages = append(stages, reconcile.Stage{Name: "reports", Took: r.took})
		}
		return rep.summary, rep.workbook, nil
	}
	if spec.DryRun {
		if _, _, err := waitReports(); err != nil {
			return nil, err
		}
		if err := rep.write(spec.OutDir); err != nil {
			return res, fmt.Errorf("dry run: writing its reports failed: %w", err)
		}
		return res, j.Notifier.Notify(ctx, reports.RunMessage(res, j.Top), filepath.Join(spec.OutDir, name), nil)
	}

	posted, err := j.DB.CompleteRun(ctx, ledger.Outcome{
		Result: res, Memory: memoryLayout(memory), Resolved: mres.Resolved, Escalated: mres.Escalated,
		WorkbookName: name, Reports: waitReports,
	})
	if err != nil {
		return nil, err
	}
	stage("commit")
	res.Stages = stages
	made, _ := aside.wait(ctx) // made: the commit took them
	spec.log.Info("run committed", "rows", res.ChannelRows, "findings", len(res.Findings), "needs_review", res.NeedsReview(),
		"journals", len(res.Journals), "journals_new", posted, stageAttrs(stages), "reports_heap_bytes", made.heap)
	committed()
	ctx = outer

	if err := rep.write(spec.OutDir); err != nil {
		// The run's outcome is committed; a report that cannot be written
		// is reported, not a reason to pretend the run failed.
		return res, fmt.Errorf("run %s succeeded, but writing its reports failed: %w", run.ID, err)
	}
	if !spec.Shard.Whole() {
		// One alert for all shards comes from `reconcile report`.
		if err := j.DB.AlertDone(ctx, run.ID, nil); err != nil {
			return res, err
		}
		return res, nil
	}
	progress.Stage("alert")
	sent, err := j.alert(ctx, run.ID, reports.RunMessage(res, j.Top), filepath.Join(spec.OutDir, name))
	if err != nil {
		return res, fmt.Errorf("run %s succeeded, but its alert was not sent (it is retried on the next tick, or by 'reconcile alert --resend %s'): %w",
			run.ID, run.ID, err)
	}
	spec.log.Debug("alert", "sent", sent) // not sent: another process had sent it
	return res, nil
}

// stillOpen lists on res the channel's findings of earlier runs that still
// wait for a decision after StillOpenDays days: none when it is negative.
func (j *Job) stillOpen(ctx context.Context, res *reconcile.Result) error {
	days := j.StillOpenDays
	if days == 0 {
		days = 3
	}
	if days < 0 {
		return nil
	}
	open, err := j.DB.StillOpen(ctx, res.Run.Channel, j.Now().AddDate(0, 0, -days), 50)
	if err != nil {
		return err
	}
	res.StillOpen, res.StillOpenDays = open, days
	return nil
}

// replay returns an earlier run's result for the same file: its reports,
// marked as a replay, written to the out directory, and no second alert.
func (j *Job) replay(ctx context.Context, prev ledger.StoredRun, spec RunSpec) (*reconcile.Result, error) {
	summary := prev.Summary
	var doc map[string]any
	if err := json.Unmarshal(summary, &doc); err == nil {
		doc["replay"] = true
		if b, err := json.MarshalIndent(doc, "", "  "); err == nil {
			summary = append(b, '\n')
		}
	}
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
	if err := writeReports(spec.OutDir, summary, name, prev.Workbook); err != nil {
		return res, fmt.Errorf("run %s: writing its reports again failed: %w", prev.Run.ID, err)
	}
	return res, nil
}

// alert sends a run's alert unless it was sent before or is being sent by
// another process, records the outcome on the run, and reports whether
// it sent it.
func (j *Job) alert(ctx context.Context, runID string, msg reports.Message, attachment string) (bool, error) {
	return j.sendOnce(ctx, alertRecord{
		claim: func(ctx context.Context) (bool, reconcile.Delivery, error) {
			return j.DB.ClaimAlert(ctx, runID, alertHold)
		},
		progress: func(ctx context.Context, d reconcile.Delivery) error { return j.DB.AlertProgress(ctx, runID, d) },
		done:     func(ctx context.Context, sendErr error) error { return j.DB.AlertDone(ctx, runID, sendErr) },
	}, msg, attachment)
}

// alertRecord is where an alert is claimed, its delivery recorded as it
// goes, and its outcome kept: a run's (runs) or a report's over shard runs
// (shard_reports).
type alertRecord struct {
	claim    func(ctx context.Context) (bool, reconcile.Delivery, error)
	progress func(ctx context.Context, d reconcile.Delivery) error
	done     func(ctx context.Context, sendErr error) error
}

// sendOnce sends an alert under its claim, resuming from how far an
// earlier attempt got, and records the outcome; it reports whether it
// sent it (false: another process has or had the claim).
func (j *Job) sendOnce(ctx context.Context, rec alertRecord, msg reports.Message, attachment string) (bool, error) {
	claimed, from, err := rec.claim(ctx)
	if err != nil || !claimed {
		return false, err
	}
	sendErr := j.Notifier.Notify(ctx, msg, attachment, recorded(ctx, from, rec.progress))
	// Recorded even when ctx is cancelled: the claim must not sit there.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := rec.done(rctx, sendErr); err != nil && sendErr == nil {
		return false, err
	}
	return sendErr == nil, sendErr
}

// recorded is the delivery of an alert that an earlier attempt took as
// far as from, each step saved by save. A step is saved even when ctx has
// been cancelled meanwhile (a signal right after the message was posted):
// the next attempt must know.
func recorded(ctx context.Context, from reconcile.Delivery, save func(context.Context, reconcile.Delivery) error) *reports.Delivery {
	return &reports.Delivery{Delivery: from, Save: func(d reconcile.Delivery) error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return save(sctx, d)
	}}
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
		msg = reports.RunMessage(res, j.Top)
		if len(stored.Workbook) > 0 {
			dir, err := os.MkdirTemp("", "reconcile-alert-")
			if err != nil {
				return false, err
			}
			defer os.RemoveAll(dir)
			if err := reports.WriteFile(dir, stored.WorkbookName, stored.Workbook); err != nil {
				return false, err
			}
			attachment = filepath.Join(dir, stored.WorkbookName)
		}
	case reconcile.RunFailed:
		msg = reports.FailureMessage(stored.Run, errors.New(stored.Run.Error))
	default:
		return false, fmt.Errorf("run %s is still %s: nothing to alert yet", runID, stored.Run.Status)
	}
	return j.alert(ctx, runID, msg, attachment)
}

// reportsAside is a run's reports being made on another goroutine.
type reportsAside struct {
	done chan madeReports
	got  *madeReports
}

// madeReports is what making the reports gave.
type madeReports struct {
	rep  *rendered
	err  error
	took time.Duration
	heap uint64 // how far the heap rose while they were made
}

// renderAside starts making the reports of res on another goroutine.
func renderAside(res *reconcile.Result, name string, opts reports.WorkbookOptions) *reportsAside {
	a := &reportsAside{done: make(chan madeReports, 1)}
	go func() {
		start, heap := time.Now(), watchHeap()
		rep, err := renderReports(res, name, opts)
		took := time.Since(start)
		a.done <- madeReports{rep, err, took, heap()}
	}()
	return a
}

// wait returns the reports once they are made, or ctx's error if it ends
// first (a signal: the run must stop now, not when a workbook of millions
// of lines is done); every call after the reports came returns them at
// once.
func (a *reportsAside) wait(ctx context.Context) (madeReports, error) {
	if a.got == nil {
		select {
		case m := <-a.done:
			a.got = &m
		case <-ctx.Done():
			return madeReports{}, context.Cause(ctx)
		}
	}
	return *a.got, nil
}

// close removes the reports' temporary files, whatever became of the run,
// without waiting: reports still being made are removed when they are done.
func (a *reportsAside) close() {
	if a.got != nil {
		if a.got.rep != nil {
			a.got.rep.close()
		}
		return
	}
	go func() {
		if r := <-a.done; r.rep != nil {
			r.rep.close()
		}
	}()
}

// rendered is a run's reports, made before its commit.
type rendered struct {
	summary, workbook []byte
	workbookName      string
	// csv is the full export of the review lines when the workbook holds
	// only the first of them, in a temporary directory until written out.
	csv, csvName string
	dir          string
}

func (r *rendered) close() { os.RemoveAll(r.dir) }

// renderReports makes the run's summary.json and workbook (and, past
// opts.MaxLines review lines, the CSV export the workbook points to).
func renderReports(res *reconcile.Result, workbookName string, opts reports.WorkbookOptions) (*rendered, error) {
	dir, err := os.MkdirTemp("", "reconcile-reports-")
	if err != nil {
		return nil, err
	}
	r := &rendered{workbookName: workbookName, dir: dir}
	path := filepath.Join(dir, workbookName)
	info, err := reports.WriteWorkbookWith(path, res, opts)
	if err != nil {
		r.close()
		return nil, err
	}
	if r.workbook, err = os.ReadFile(path); err != nil {
		r.close()
		return nil, err
	}
	if info.CSV != "" {
		r.csv, r.csvName = filepath.Join(dir, info.CSV), info.CSV
	}
	spath := filepath.Join(dir, "summary.json")
	s := reports.NewSummary(res, workbookName)
	s.SetWorkbook(info)
	s.Replay = res.Replay
	if err := reports.WriteSummary(spath, s); err != nil {
		r.close()
		return nil, err
	}
	if r.summary, err = os.ReadFile(spath); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// write puts the reports in the out directory.
func (r *rendered) write(dir string) error {
	if r.csv != "" {
		b, err := os.ReadFile(r.csv)
		if err != nil {
			return err
		}
		if err := reports.WriteFile(dir, r.csvName, b); err != nil {
			return err
		}
	}
	return writeReports(dir, r.summary, r.workbookName, r.workbook)
}

// writeReports puts a run's reports in its out directory.
func writeReports(dir string, summary []byte, workbookName string, workbook []byte) error {
	if len(workbook) > 0 {
		if err := reports.WriteFile(dir, workbookName, workbook); err != nil {
			return err
		}
	}
	return reports.WriteFile(dir, "summary.json", summary)
}

// fail records a failed run, writes a summary.json that says why, and
// sends the failure alert once.
func (j *Job) fail(ctx context.Context, run *reconcile.Run, spec RunSpec, cause error) {
	var ns *notStartedError
	started := !errors.As(cause, &ns)
	run.Status = reconcile.RunFailed
	run.FinishedAt = j.Now()
	run.Error = errorText(cause)
	spec.log.Error("run failed", "error", run.Error)
	// The failure must be recorded even when ctx was cancelled by a
	// signal: a short budget of its own, still tied to ctx's values.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	recorded := false
	if started && !spec.DryRun && j.DB != nil {
		if err := j.DB.FailRun(wctx, run.ID, run.FinishedAt, run.Error); err != nil {
			spec.log.Warn("could not record the run as failed (the next run will)", "error", err)
		} else {
			recorded = true
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
				spec.log.Warn("failed run's summary.json not written", "error", err)
			}
		}
	}
	msg := reports.FailureMessage(*run, errors.New(run.Error))
	var err error
	if recorded {
		_, err = j.alert(wctx, run.ID, msg, "")
	} else {
		// No run record to remember the alert by (the database is away, or
		// the run never started): say it now.
		err = j.Notifier.Notify(wctx, msg, "", nil)
	}
	if err != nil {
		spec.log.Warn("failure alert not sent", "error", err)
	}
}

// memoryLayout is the night's memory as the ledger stores it.
func memoryLayout(blob []byte) ledger.Memory {
	lay := matcher.LayOut(blob)
	mem := ledger.Memory{Bits: lay.Bits, Filter: lay.Filter}
	for _, p := range lay.Parts {
		mem.Parts = append(mem.Parts, ledger.MemoryPart{Index: p.Index, Rows: matcher.MemoryRows(p.Records), Records: p.Records})
	}
	return mem
}

// stageAttrs is the group "stages" of a run's log line, one duration per
// stage: stages.parse=1.2s in text, "stages":{"parse":1200000000} (in
// nanoseconds, as slog writes a duration) in JSON.
func stageAttrs(stages []reconcile.Stage) slog.Attr {
	as := make([]any, len(stages))
	for i, s := range stages {
		as[i] = slog.Duration(strings.ReplaceAll(s.Name, " ", "_"), s.Took)
	}
	return slog.Group("stages", as...)
}
