package nightly

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"reconcile"
	"reconcile/channelfeed"
	"reconcile/compensate"
	"reconcile/config"
	"reconcile/ledger"
	"reconcile/matcher"
	"reconcile/reports"
	"reconcile/terminal"
)

// night is one run's work, stage by stage: what each stage leaves, the
// next one takes. A settlement row goes from the parser (parse) into the
// matcher's index, meets its local record (loadLocal) and the nights
// before (remember), becomes a finding (classify), and is committed with
// its journal and memory while the workbook is made aside (commit); the
// reports are written and the alert sent last (deliver).
type night struct {
	db       *ledger.DB
	cfg      config.Config
	notifier reports.Notifier
	now      func() time.Time
	progress terminal.Progress
	run      *reconcile.Run
	spec     RunSpec
	log      *slog.Logger

	intake  *matcher.Intake // the matcher while the file and the day's window are read
	m       *matcher.Matcher
	found   matcher.Classification
	events  reconcile.EventLog    // found's new dispute events, packed for the commit
	memory  reconcile.NightMemory // the night's memory as it is stored, once m is done with
	res     *reconcile.Result
	reports *reports.Aside
	rep     *reports.Rendered
	posted  int                // journals the commit posted
	payouts []reconcile.Payout // the payouts the channel's file told of
	// statement is a bank statement's night's (statement.go).
	statement *statement
	stages    []reconcile.Stage
	// dayCases is the ledger's answer about the orders of the day's
	// refunds, asked while the file is read (see related).
	dayCases *aside[[]reconcile.OrderRefunds]
	// laterCases is the rest of it, asked once the local records are in
	// and answered while the memory is read; idem is the idempotency
	// status of the window's keys that do not simply match, asked once
	// the window is in and answered while the rest is read.
	laterCases *aside[matcher.Known]
	idem       *aside[[]idemStatus]
}

// aside is work on another goroutine that a later stage waits for; a
// night that ends before cancels it and waits for it to stop.
type aside[T any] struct {
	cancel context.CancelFunc
	done   chan struct{}
	v      T
	err    error
}

func startAside[T any](ctx context.Context, work func(context.Context) (T, error)) *aside[T] {
	ctx, cancel := context.WithCancel(ctx)
	a := &aside[T]{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.v, a.err = work(ctx)
	}()
	return a
}

// wait is the work's result, once it is done. The aside lets go of it:
// what the night asked aside (the orders a refund or dispute touches,
// with their refunds) is not kept through the reports and the commit.
// Call it once.
func (a *aside[T]) wait() (T, error) {
	<-a.done
	v := a.v
	var zero T
	a.v = zero
	return v, a.err
}

// stop cancels the work and waits for it to end.
func (a *aside[T]) stop() {
	a.cancel()
	<-a.done
}

// stage is one step of the night: its name, as the progress line and
// the log's stages show it, and its work.
type stage struct {
	name string
	do   func(context.Context) error
}

// work runs the night up to its commit, each stage timed and shown in
// turn; a dry run stops before the commit.
func (n *night) work(ctx context.Context) (*reconcile.Result, error) {
	stages := n.statementStages()
	if !n.spec.Statement() {
		stages = n.channelStages(ctx)
	}
	if !n.spec.DryRun {
		stages = append(stages, stage{"commit", n.commit})
	}
	for _, s := range stages {
		n.progress.Stage(s.name)
		start := time.Now()
		if err := s.do(ctx); err != nil {
			return nil, err
		}
		n.stages = append(n.stages, reconcile.Stage{Name: s.name, Took: time.Since(start)})
	}
	n.res.Stages = n.stages
	if !n.spec.DryRun {
		res := n.res
		_, made, _ := n.reports.Wait(ctx) // the commit took them
		n.log.Info("run committed", "rows", res.ChannelRows, "findings", len(res.Findings), "needs_review", res.NeedsReview(),
			"journals", len(res.Journals), "journals_new", n.posted, stageAttrs(n.stages), "reports_heap_bytes", made.Heap)
	}
	return n.res, nil
}

// channelStages are the stages of a channel's settlement file, up to
// its commit.
func (n *night) channelStages(ctx context.Context) []stage {
	// The day's refunds' orders need nothing of the file: the database
	// answers while the file is parsed.
	spec := n.spec
	n.dayCases = startAside(ctx, func(ctx context.Context) ([]reconcile.OrderRefunds, error) {
		return n.db.DayOrderRefunds(ctx, spec.Channel, spec.Day, spec.Shard)
	})
	return []stage{
		{"parse", n.parse},
		{"local records", n.loadLocal},
		{"related", n.related},
		{"memory", n.remember},
		{"match", n.classify},
		{"still open", n.gather},
	}
}

// close removes the reports' temporary files, whatever became of the run.
func (n *night) close() {
	if n.dayCases != nil {
		n.dayCases.stop()
	}
	if n.laterCases != nil {
		n.laterCases.stop()
	}
	if n.idem != nil {
		n.idem.stop()
	}
	if n.intake != nil {
		n.intake.Close()
	}
	if n.reports != nil {
		n.reports.Close()
	}
}

// dryRun is a night that writes nothing to the database: its reports go to
// the out directory, its alert is printed.
func (n *night) dryRun(ctx context.Context) (*reconcile.Result, error) {
	res, err := n.work(ctx)
	if err != nil {
		return nil, err
	}
	// Where a run commits, a dry run waits for its reports.
	n.progress.Stage("commit")
	if err := n.waitReports(ctx); err != nil {
		return nil, err
	}
	if err := n.rep.Write(n.spec.OutDir); err != nil {
		return res, fmt.Errorf("dry run: writing its reports failed: %w", err)
	}
	return res, n.notifier.Notify(ctx, reports.RunMessage(res, n.cfg.Slack.Top), n.workbookPath(), nil)
}

// parse reads the settlement file into the matcher: the rows of the
// run's shard, the file checked to be the one fingerprinted. The day's
// window of local records is read beside it (matcher.Intake).
func (n *night) parse(ctx context.Context) error {
	spec, progress := n.spec, n.progress
	in := matcher.NewIntake(spec.Day, matcher.Options{Grace: spec.Grace, ExpectRows: spec.expectRows(),
		RefundWindow: spec.RefundWindow, PaymentWindow: spec.PaymentWindow, Fees: spec.Fees, Shard: spec.Shard,
		ForeignIDs: channelfeed.ForeignPaymentIDs(spec.Format)})
	n.intake = in
	in.StartWindow(ctx, func(ctx context.Context, fn func(*reconcile.LocalRow) error) (int, error) {
		return n.db.LoadWindow(ctx, spec.Channel, spec.Day, spec.Shard, fn)
	})
	var rows int64
	opts := spec.Parse()
	if spec.Shard.Whole() || spec.Shard.Index == 0 {
		// The file's payouts, once whatever the shards: every shard reads
		// the whole file.
		opts.Payouts = func(p reconcile.Payout) error {
			n.payouts = append(n.payouts, spec.expected(p))
			return nil
		}
	}
	_, err := channelfeed.ParseFileAside(ctx, spec.File, spec.Format, opts, func(tx reconcile.Transaction) {
		in.Row(tx)
		if rows++; rows%terminal.Every == 0 {
			progress.Rows(rows)
		}
	})
	in.FileRead()
	if err != nil {
		return err // a file that changed since its fingerprint included
	}
	progress.Rows(rows)
	n.log.Debug("settlement file read", "file", spec.File, "format", spec.Format, "rows", rows)
	return nil
}

// loadLocal finishes the local records: the rest of the day's window,
// once the refund rows without our refund number have it, then the
// records of keys the file names outside the window. The idempotency
// statuses of the window's keys that do not simply match are asked aside.
func (n *night) loadLocal(ctx context.Context) error {
	spec, db := n.spec, n.db
	// Refund rows without our refund number get it from our records by
	// the channel's refund id; then the rows are all in, and the records
	// that came before theirs meet them.
	linked, err := db.RefundsByChannelID(ctx, spec.Channel, n.intake.UnkeyedRefunds())
	if err != nil {
		return err
	}
	// Dispute events that name no order are placed by the payment's id.
	owners, err := db.OrdersByChannelID(ctx, spec.Channel, n.intake.UnplacedDisputes())
	if err != nil {
		return err
	}
	n.intake.PlaceDisputes(owners)
	m, read, err := n.intake.Finish(linked)
	if err != nil {
		return err
	}
	n.intake, n.m = nil, m
	// The window's keys that do not simply match are asked for their
	// idempotency status now, on another connection, while the records of
	// the keys outside the window are read: those carry their own.
	idemOrders, idemRefunds := n.m.IdemKeys()
	n.idem = startAside(ctx, func(ctx context.Context) ([]idemStatus, error) {
		return idemStatuses(ctx, db, idemOrders, idemRefunds)
	})
	// Earlier nights are merged by key hash: tonight's keys are hashed
	// into the passes they meet them in.
	if remembers, err := db.RemembersBefore(ctx, spec.Channel, spec.Day, n.cfg.MemoryDays); err != nil {
		return err
	} else if remembers {
		n.m.Nights().Hash()
	}
	orders, refunds := n.m.LocalKeys()
	more, err := db.LoadKeys(ctx, spec.Channel, spec.Day, orders, refunds, func(r *reconcile.LocalRow) error {
		n.m.AddLocalRow(r)
		return nil
	})
	if err != nil {
		return err
	}
	n.progress.Rows(int64(read + more))
	return nil
}

// related brings in what the rules by order and by customer need beyond
// the keys: the other refunds of the orders a refund touches tonight, and
// the customers' orders settled on earlier nights close to tonight's.
func (n *night) related(ctx context.Context) error {
	spec, db := n.spec, n.db
	day, err := n.dayCases.wait()
	if err != nil {
		return err
	}
	// The orders of tonight's refund rows the day's records did not hold
	// (an order in both answers is answered alike), the customers'
	// earlier orders, and our orders that hold the channel ids of payments
	// that do not simply match: the database answers while the memory is
	// read.
	q := n.m.Questions()
	n.laterCases = startAside(ctx, func(ctx context.Context) (matcher.Known, error) {
		k := matcher.Known{OrderRefunds: day}
		owners, err := db.OrdersByChannelID(ctx, spec.Channel, q.PaymentIDs)
		if err != nil {
			return k, err
		}
		k.PaymentOwners = owners
		if k.Disputes, err = db.DisputeEvents(ctx, spec.Channel, spec.Day, q.Disputes); err != nil {
			return k, err
		}
		if spec.Disputes != "" {
			if k.Recorded, err = db.RecordedDisputes(ctx, spec.Disputes, spec.Channel, spec.Day, q.Disputes); err != nil {
				return k, err
			}
			if k.Overdue, err = db.OverdueDisputes(ctx, spec.Disputes, spec.Channel, spec.Day, spec.DisputeWindow); err != nil {
				return k, err
			}
		}
		// One answer at most per order asked: sized once, not doubled by
		// append (at 1 % chargebacks, a tenth of a night's live heap).
		k.OrderRefunds = slices.Grow(k.OrderRefunds, len(q.RefundOrders))
		if k.OrderRefunds, err = db.OrderRefunds(ctx, spec.Channel, spec.Day, spec.Shard, q.RefundOrders, k.OrderRefunds); err != nil {
			return k, err
		}
		err = db.EarlierOrders(ctx, spec.Channel, spec.Day, spec.PaymentWindow, spec.Grace, q.EarlyOrders, func(o reconcile.LocalRecord) error {
			k.EarlierOrders = append(k.EarlierOrders, o)
			return nil
		})
		return k, err
	})
	return nil
}

// idemStatus is the idempotency status of a key.
type idemStatus struct {
	kind        reconcile.Kind
	key, status string
}

func idemStatuses(ctx context.Context, db *ledger.DB, orders, refunds []string) ([]idemStatus, error) {
	var out []idemStatus
	err := db.IdemStatuses(ctx, orders, refunds, func(k reconcile.Kind, key, status string) error {
		out = append(out, idemStatus{k, key, status})
		return nil
	})
	return out, err
}

// remember brings in the earlier nights' memory, and then the
// idempotency statuses asked for while it was read, with those of the
// keys it made into cases (a key settled on an earlier night).
func (n *night) remember(ctx context.Context) error {
	spec, db := n.spec, n.db
	if err := db.MemoryBefore(ctx, spec.Channel, spec.Day, n.cfg.MemoryDays, n.m.Nights()); err != nil {
		return err
	}
	n.m.NightsRead()
	asked, err := n.idem.wait()
	if err != nil {
		return err
	}
	orders, refunds := n.m.MemoryIdemKeys()
	more, err := idemStatuses(ctx, db, orders, refunds)
	if err != nil {
		return err
	}
	for _, s := range append(asked, more...) {
		n.m.SetIdem(s.kind, s.key, s.status)
	}
	return nil
}

// classify adds what earlier runs left (pending records, duplicates of
// the date reversed) to what the ledger answered, and classifies
// everything: the run's result, its findings numbered and its reversals
// planned.
func (n *night) classify(ctx context.Context) error {
	spec, db := n.spec, n.db
	known, err := n.laterCases.wait()
	if err != nil {
		return err
	}
	if known.Pending, err = db.PendingBefore(ctx, spec.Channel, spec.Day); err != nil {
		return err
	}
	if known.Reversed, err = db.ReversedOnDate(ctx, spec.Channel, spec.Day, spec.Shard); err != nil {
		return err
	}
	if known.Disputed, err = db.DisputedOrders(ctx, spec.Channel, spec.Day, n.m.RepeatedOrders()); err != nil {
		return err
	}
	n.run.Status = reconcile.RunSucceeded
	n.run.FinishedAt = n.now()
	// What the stages before left (the ledger's answers as the driver
	// read them, the earlier nights' memory on its way in) is collected
	// before classification makes the night's findings: the heap's peak
	// is then the night's live data and its findings, not those and the
	// garbage too (docs/performance.md).
	runtime.GC()
	n.found = n.m.Classify(known)
	// The new dispute events wait for the commit packed, not as the rules
	// read them, while the memory is laid out and the reports are made.
	n.events = reconcile.PackEvents(n.found.DisputeEvents...)
	n.found.DisputeEvents = nil
	// The matcher is done with: its memory goes to the commit.
	n.memory, n.m = n.m.Memory(), nil
	n.res = n.found.Result(*n.run)
	n.res.Journals = compensate.Plan(spec.Channel, n.res.Findings)
	return nil
}

// gather reads what the reports show beside tonight's findings (the
// findings still open from earlier runs, the channel's earlier days for
// the Trend sheet; a dry run reads them too, as it reads everything
// else), and starts making the reports on the other core.
func (n *night) gather(ctx context.Context) error {
	if n.spec.Shard.Whole() {
		if err := stillOpen(ctx, n.db, n.cfg, n.now(), n.res); err != nil {
			return err
		}
	}
	trend, err := n.db.Trend(ctx, n.spec.Channel, n.spec.Day, reports.TrendDays-1)
	if err != nil {
		return err
	}
	n.reports = reports.RenderAside(n.res, n.workbookName(),
		reports.WorkbookOptions{MaxLines: n.cfg.ReviewMaxLines, Trend: trend})
	return nil
}

// waitReports waits for the reports; the stage "reports" is the time
// they took to make, not the wait.
func (n *night) waitReports(ctx context.Context) error {
	rep, made, err := n.reports.Wait(ctx)
	if err != nil {
		return err
	}
	if n.rep == nil {
		n.rep = rep
		n.stages = append(n.stages, reconcile.Stage{Name: "reports", Took: made.Took})
	}
	return nil
}

// commit writes the night in one transaction: findings, journals, the
// memory of the file's rows, the fate of earlier pending findings, and the
// reports, which the transaction waits for after the large writes.
func (n *night) commit(ctx context.Context) error {
	o := ledger.Outcome{Result: n.res, Memory: n.memory, Resolved: n.found.Resolved, Escalated: n.found.Escalated,
		DisputeEvents: n.events, Payouts: n.payouts, WorkbookName: n.workbookName()}
	if st := n.statement; st != nil {
		o.Entries, o.Arrivals = st.entries, st.matched.Arrivals
	}
	o.Reports = func() ([]byte, []byte, error) {
		if err := n.waitReports(ctx); err != nil {
			return nil, nil, err
		}
		return n.rep.Summary, n.rep.Workbook, nil
	}
	posted, err := n.db.CompleteRun(ctx, o)
	n.posted = posted
	n.memory = reconcile.NightMemory{} // written: what is left of the night needs none of it
	return err
}

// deliver writes the committed night's reports and sends its alert: one
// alert for all shards comes from `reconcile report`. Its errors leave
// the run SUCCEEDED: the outcome is committed.
func (n *night) deliver(ctx context.Context) error {
	if err := n.rep.Write(n.spec.OutDir); err != nil {
		return fmt.Errorf("run %s succeeded, but writing its reports failed: %w", n.run.ID, err)
	}
	if !n.spec.Shard.Whole() {
		return n.db.AlertDone(ctx, n.run.ID, nil)
	}
	n.progress.Stage("alert")
	sent, err := sendOnce(ctx, n.notifier, runAlert(n.db, n.run.ID), reports.RunMessage(n.res, n.cfg.Slack.Top), n.workbookPath())
	if err != nil {
		return fmt.Errorf("run %s succeeded, but its alert was not sent (it is retried on the next tick, or by 'reconcile alert --resend %s'): %w",
			n.run.ID, n.run.ID, err)
	}
	n.log.Debug("alert", "sent", sent) // not sent: another process had sent it
	return nil
}

func (n *night) workbookName() string { return reports.WorkbookName(n.spec.Channel, n.spec.Day) }

func (n *night) workbookPath() string { return filepath.Join(n.spec.OutDir, n.workbookName()) }

// stillOpen lists on res the channel's findings of earlier runs that still
// wait for a decision after the config's still_open_days: none when it is
// negative.
func stillOpen(ctx context.Context, db *ledger.DB, cfg config.Config, now time.Time, res *reconcile.Result) error {
	days := cfg.StillOpenDays
	if days < 0 {
		return nil
	}
	open, err := db.StillOpen(ctx, res.Run.Channel, now.AddDate(0, 0, -days), 50)
	if err != nil {
		return err
	}
	res.StillOpen, res.StillOpenDays = open, days
	return nil
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
