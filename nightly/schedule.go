package nightly

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"reconcile"
	"reconcile/atomicfile"
	"reconcile/channelfeed"
	"reconcile/config"
	"reconcile/fetch"
	"reconcile/metrics"
	"reconcile/reports"
)

// Scheduler decides what a tick reconciles, and does it.
type Scheduler struct {
	Config config.Config
	Job    *Job
	Now    func() time.Time
	Log    *slog.Logger // nil: nothing is logged
	// Metrics is told of every run, fetch, overdue file and sign of life;
	// nil when metrics are off.
	Metrics *metrics.Observer
	// Fetcher downloads the files of the channels with a fetch block; nil
	// when none has one.
	Fetcher *Fetcher
}

func (s *Scheduler) log() *slog.Logger {
	if s.Log == nil {
		return discard
	}
	return s.Log
}

// Due is one date of one channel a tick looked at.
type Due struct {
	Spec RunSpec
	// Ready is false when the file is not there yet; Overdue when it is
	// still not there past the channel's deadline.
	Ready, Overdue bool
	Deadline       time.Time
}

// Plan lists, per channel and in date order, every business date of the
// lookback window before today (in the channel's zone) whose file has no
// successful run yet: a night missed by downtime is caught up on the next
// tick. A file not there is not ready: no run, so no false flood of
// missing_channel findings.
func (s *Scheduler) Plan(ctx context.Context) ([]Due, error) {
	now := s.Now()
	var due []Due
	for _, ch := range s.Config.Channels {
		loc, err := time.LoadLocation(ch.TimeZone)
		if err != nil {
			continue // config.Load refuses such a config
		}
		local := now.In(loc)
		for back := s.Config.Schedule.LookbackDays; back >= 1; back-- {
			date := time.Date(local.Year(), local.Month(), local.Day()-back, 0, 0, 0, 0, loc)
			d, ok, err := s.look(ctx, ch, reconcile.BusinessDay{Date: date, Location: loc}, now)
			if err != nil {
				return nil, err
			}
			if ok {
				due = append(due, d)
			}
		}
	}
	return due, nil
}

// look says whether the file of ch's day is due (ok), and how.
func (s *Scheduler) look(ctx context.Context, ch config.Channel, day reconcile.BusinessDay, now time.Time) (d Due, ok bool, err error) {
	d = Due{Spec: NewSpec(s.Config, ch, day), Deadline: ch.OverdueAt(day.End())}
	file, err := channelfeed.Fingerprint(d.Spec.File)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.Overdue = now.After(d.Deadline)
		return d, true, nil
	case err != nil:
		// There but unreadable: a run says so, loudly.
		d.Ready = true
		return d, true, nil
	case s.Job.DB == nil:
		// check-config without a database: past runs are unknown, so
		// every file there is listed.
		d.Ready = true
		return d, true, nil
	}
	done, err := s.Job.DB.HasSuccess(ctx, ch.Name, day, file.SHA256)
	d.Ready = !done
	return d, !done, err
}

// Tick reconciles what Plan finds, one run at a time; alerts the files
// past their deadline, once per channel and date; and sends again the
// alerts of runs that could not be sent. A failed channel is alerted by the
// job and does not stop the others.
func (s *Scheduler) Tick(ctx context.Context) {
	s.Metrics.TickStarted()
	defer s.Metrics.TickDone()
	noBill := s.fetchDue(ctx)
	due, err := s.Plan(ctx)
	if err != nil {
		s.log().Error("tick not planned", "error", err)
		return
	}
	overdue := map[string]int{}
	for _, d := range due {
		if d.Overdue {
			overdue[d.Spec.Channel]++
		}
	}
	s.Metrics.Overdue(overdue)
	for _, d := range due {
		s.Metrics.Beat()
		if ctx.Err() != nil {
			return
		}
		spec := d.Spec
		switch {
		case d.Ready:
			start := time.Now()
			res, err := s.Job.Run(ctx, spec)
			s.Metrics.Ran(spec.Channel, res, err, time.Since(start))
			if err != nil {
				continue // the job has logged it, with its run id
			}
			s.log().Info("scheduled run done", "run_id", res.Run.ID, "channel", spec.Channel,
				"business_date", spec.Day.String(), "needs_review", res.NeedsReview(), "replay", res.Replay)
		case d.Overdue && !noBill[spec.Channel+" "+spec.Day.String()]:
			s.overdue(ctx, d)
		}
	}
	s.resendAlerts(ctx)
}

// fetchDue fetches, for every channel whose file the job fetches, the
// files of the lookback window that can exist by now: those not there
// yet, and, from WeChat Pay, which states each bill's hash, those there
// too, so a corrected bill replaces the old one without a download of an
// unchanged one. A channel of batches is asked once a tick, for all its
// new batches. A refusal, or a file refused for its content, is alerted
// once, and so is each batch held aside; the channel's refusal ends its fetches of the tick, since the
// credentials are the channel's, not the date's. It returns
// the channel and dates the channel said it has no bill for, which are not
// overdue.
func (s *Scheduler) fetchDue(ctx context.Context) map[string]bool {
	noBill := map[string]bool{}
	if s.Fetcher == nil {
		return noBill
	}
	now := s.Now()
	for _, ch := range s.Config.Channels {
		if !s.Fetcher.Has(ch.Name) || ch.Fetch == nil {
			continue
		}
		loc, err := time.LoadLocation(ch.TimeZone)
		if err != nil {
			continue // config.Load refuses such a config
		}
		local := now.In(loc)
		var days []reconcile.BusinessDay
		for back := s.Config.Schedule.LookbackDays; back >= 1; back-- {
			day := reconcile.BusinessDay{Date: time.Date(local.Year(), local.Month(), local.Day()-back, 0, 0, 0, 0, loc), Location: loc}
			if now.Before(ch.Fetch.AvailableAt(day.End())) {
				break // nor can the later ones exist
			}
			days = append(days, day)
		}
		// A download a crash cut short leaves its temporary in the
		// directory of its date, which no write may visit again once the
		// file is there (a path with {date} in its directory).
		swept := map[string]bool{}
		for _, day := range days {
			if dir := filepath.Dir(ch.FilePath(day.Date)); !swept[dir] {
				atomicfile.RemoveStale(dir)
				swept[dir] = true
			}
		}
		if _, batches := s.Fetcher.Batches[ch.Name]; batches && len(days) > 0 {
			days = days[len(days)-1:]
		}
		for _, day := range days {
			if ctx.Err() != nil {
				return noBill
			}
			s.Metrics.Beat()
			there := present(ch.FilePath(day.Date))
			if there && ch.Fetch.WeChatPay == nil {
				continue
			}
			got := s.Fetcher.Fetch(ctx, ch, day, there)
			for _, h := range got.Held {
				if h.Alert {
					s.heldAlert(ctx, got, h)
				}
			}
			_, refused := errors.AsType[*fetch.Refusal](got.Err)
			switch {
			case got.Result == "no_bill":
				noBill[ch.Name+" "+day.String()] = true
				s.fetchAlert(ctx, got)
			case got.Result == "bad_file", got.Result == "refused" && (refused || len(got.Held) == 0):
				s.fetchAlert(ctx, got)
			}
			if _, ok := errors.AsType[*fetch.Refusal](got.Err); ok {
				break // the channel's credentials, not the date's: ask nothing more this tick
			}
		}
	}
	return noBill
}

// fetchAlert alerts, once per channel, date and kind, a fetch refused, a
// file refused for its content, or a date the channel has no bill for.
func (s *Scheduler) fetchAlert(ctx context.Context, got Fetched) {
	log := s.log().With("channel", got.Channel, "business_date", got.Day.String())
	first, err := s.Job.DB.ClaimFetchAlert(ctx, got.Channel, got.Day, got.Result)
	if err != nil {
		log.Error("fetch alert not claimed", "error", err)
		return
	}
	if !first {
		return
	}
	var msg reports.Message
	if got.Result == "no_bill" {
		msg = reports.NoBillMessage(got.Channel, got.Day)
	} else {
		msg = reports.FetchRefusedMessage(got.Channel, got.Day, got.Err)
	}
	if err := s.Job.Notifier.Notify(alertFor(ctx, got.Channel), msg, "", nil); err != nil {
		log.Warn("fetch alert not sent", "error", err)
	}
}

// heldAlert alerts a batch held aside. The batch's row in
// fetched_batches is the claim (h.Alert: this fetch recorded it first),
// so each held batch is alerted once, however many batches a day holds
// and however many replicas fetch it.
func (s *Scheduler) heldAlert(ctx context.Context, got Fetched, h HeldBatch) {
	log := s.log().With("channel", got.Channel, "business_date", got.Day.String(), "batch", h.Number)
	log.Warn("batch held aside", "file", h.Path, "error", h.Err)
	msg := reports.HeldBatchMessage(got.Channel, h.Number, h.Path, h.Err)
	if err := s.Job.Notifier.Notify(alertFor(ctx, got.Channel), msg, "", nil); err != nil {
		log.Warn("held batch alert not sent", "error", err)
	}
}

// overdue alerts a file past its deadline, once: of several replicas,
// the one that claims it.
func (s *Scheduler) overdue(ctx context.Context, d Due) {
	spec := d.Spec
	// No run yet, so no run id: the channel and date say which.
	log := s.log().With("channel", spec.Channel, "business_date", spec.Day.String())
	first, err := s.Job.DB.ClaimOverdue(ctx, spec.Channel, spec.Day)
	if err != nil {
		log.Error("overdue file not claimed", "error", err)
		return
	}
	if !first {
		return
	}
	log.Warn("settlement file overdue", "file", spec.File, "deadline", d.Deadline)
	msg := reports.OverdueMessage(spec.Channel, spec.Day, spec.File, d.Deadline)
	if err := s.Job.Notifier.Notify(alertFor(ctx, spec.Channel), msg, "", nil); err != nil {
		log.Warn("overdue alert not sent", "error", err)
	}
}

// resendAlerts sends the alerts that failed within the lookback window.
func (s *Scheduler) resendAlerts(ctx context.Context) {
	since := s.Now().AddDate(0, 0, -s.Config.Schedule.LookbackDays-1)
	ids, err := s.Job.DB.AlertsDue(ctx, since)
	if err != nil {
		s.log().Error("alerts to send again not read", "error", err)
		return
	}
	for _, id := range ids {
		sent, err := s.Job.Resend(ctx, id)
		switch {
		case err != nil:
			s.log().Warn("alert still not sent", "run_id", id, "error", err)
		case sent:
			s.log().Info("alert sent again", "run_id", id)
		}
	}
}
