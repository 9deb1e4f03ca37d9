package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reconcile"
)

// The payouts' nights run in a schema of their own, with the channel
// psp (the canonical CSV, its payouts looked for by counterparty) paying
// into the bank channel's account (camt.053). Before tonight the job
// runs on -nights earlier nights, each the channel's file and the next
// day's statement, so tonight's statement meets what steady use leaves:
// payouts arrived within reach of a return, payouts told missing, bank
// entries and arrivals of earlier statements, credits still unexplained.

const (
	payoutSchema  = "reconbench_payouts"
	pspChannel    = "psp"
	bankChannel   = "bank"
	payoutsFormat = "camt053"
)

// payoutEnv is what the payouts' runs share.
type payoutEnv struct {
	*benchEnv
	spec PayoutSpec
	dsn  string // of payoutSchema
	res  *payoutsJSON
}

// benchPayouts makes the payouts' schema and earlier nights, then times
// tonight's channel night and statement night e.runs times each.
func (e *benchEnv) benchPayouts(ctx context.Context, dsn string, spec PayoutSpec, nights int) ([]JobResult, error) {
	logf("payouts: %d a night, %d earlier nights (seed %d)", spec.Payouts, nights, spec.Seed)
	if _, err := newSchema(ctx, dsn, payoutSchema); err != nil {
		return nil, err
	}
	p := &payoutEnv{benchEnv: e, spec: spec, dsn: withSearchPath(dsn, payoutSchema),
		res: &payoutsJSON{Payouts: spec.Payouts, EarlierNights: nights, Earlier: []payoutRunJSON{}, Runs: []runJSON{}}}
	e.rep.Payouts = p.res
	start := time.Now()
	for back := nights; back >= 1; back-- {
		if err := p.earlierNight(ctx, back, nights); err != nil {
			return nil, err
		}
	}
	if err := analyzeSchema(ctx, p.dsn); err != nil {
		return nil, fmt.Errorf("analyze the payouts' tables: %w", err)
	}
	p.res.EarlierSetupSeconds = time.Since(start).Seconds()

	start = time.Now()
	night, err := WritePayoutNight(spec, e.tmp, 0)
	if err != nil {
		return nil, fmt.Errorf("generate the payouts' night: %w", err)
	}
	p.res.GenerateSeconds = time.Since(start).Seconds()
	want := night.Want(p.toldTonight(0, nights))
	p.res.tonight(night, want)
	var jobs []JobResult
	for round := 1; round <= e.runs; round++ {
		ch, st, err := p.runNight(ctx, night, want, round)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, ch, st)
		p.res.Runs = append(p.res.Runs, runOf(ch, night.ChannelFile), runOf(st, night.Statement))
	}
	for _, g := range groupByInput(jobs) {
		lo, mid := summarize(g, minOf), summarize(g, medianOf)
		p.res.Summary = append(p.res.Summary, runSummaryJSON{Input: g[0].Input, Runs: len(g),
			WallSecondsMin: lo.Wall.Seconds(), WallSecondsMedian: mid.Wall.Seconds(),
			PeakRSSKiBMin: lo.MaxRSSKiB, PeakRSSKiBMedian: mid.MaxRSSKiB})
	}
	return jobs, nil
}

// toldTonight is how many unexpected credits the night back tells: those
// of the night tellCreditAfter before it, if it was made.
func (p *payoutEnv) toldTonight(back, nights int) int {
	if back+tellCreditAfter > nights {
		return 0
	}
	return p.spec.payoutTotals(back + tellCreditAfter).Unexpected
}

// earlierNight writes, runs and checks the night back nights before
// tonight, then removes its files unless they are kept.
func (p *payoutEnv) earlierNight(ctx context.Context, back, nights int) error {
	night, err := WritePayoutNight(p.spec, p.tmp, back)
	if err != nil {
		return fmt.Errorf("generate the payouts' night %s: %w", night.Day.Format(time.DateOnly), err)
	}
	ch, st, err := p.runNight(ctx, night, night.Want(p.toldTonight(back, nights)), 0)
	if err != nil {
		return err
	}
	logf("payouts' earlier night %s: channel night %s s, statement night %s s",
		night.Day.Format(time.DateOnly), secs(ch.Wall), secs(st.Wall))
	p.res.Earlier = append(p.res.Earlier, payoutRunJSON{Date: night.Day.Format(time.DateOnly),
		ChannelWallSeconds: ch.Wall.Seconds(), StatementWallSeconds: st.Wall.Seconds(),
		StatementPeakRSSKiB: st.MaxRSSKiB, Counts: countsJSON(st.Got.Counts)})
	if !p.keep {
		os.Remove(night.ChannelFile)
		os.Remove(night.Statement)
	}
	return nil
}

// runNight runs the channel's night and then the statement's night of
// night, each checked: the channel's file tells of payouts only and finds
// nothing; the statement finds what was planted. round 0 is an earlier
// night's one run; a round after the first is forced.
func (p *payoutEnv) runNight(ctx context.Context, night PayoutNight, want Expected, round int) (ch, st JobResult, err error) {
	label := func(who string) string {
		if round == 0 {
			return "payouts' earlier night " + night.Day.Format(time.DateOnly) + " " + who
		}
		return p.label("payouts "+who, round)
	}
	if ch, err = p.runPayoutJob(ctx, pspChannel, "csv", night.ChannelDay, night.ChannelFile, round); err != nil {
		return ch, st, err
	}
	p.benchEnv.rep.check(label("channel csv"), Expected{Counts: map[reconcile.Category]int{}}, ch.Got)
	if st, err = p.runPayoutJob(ctx, bankChannel, payoutsFormat, night.Day, night.Statement, round); err != nil {
		return ch, st, err
	}
	p.benchEnv.rep.check(label("statement "+payoutsFormat), want, st.Got)
	if st.ChannelRows != night.Entries {
		p.benchEnv.rep.mismatch("MISMATCH %s: %d entries read, %d written", label("statement "+payoutsFormat), st.ChannelRows, night.Entries)
	}
	return ch, st, nil
}

// runPayoutJob runs the job on one file of the payouts' schema.
func (p *payoutEnv) runPayoutJob(ctx context.Context, channel, format string, day time.Time, file string, round int) (JobResult, error) {
	out := filepath.Join(p.tmp, "out-"+channel+"-"+day.Format(time.DateOnly))
	if round > 0 {
		out += fmt.Sprintf("-%d", round)
	}
	args := []string{"run", "--date", day.Format(time.DateOnly), "--channel", channel, "--format", format, "--tz", "UTC",
		"--file", file, "--config", p.cfg, "--dsn", p.dsn, "--out", out}
	if round > 1 {
		args = append(args, "--force")
	}
	if round > 0 {
		logf("timing reconcile run --format %s (channel %s, %s)", format, channel, day.Format(time.DateOnly))
	}
	res, err := RunJob(ctx, p.bin, p.tmp, args, out)
	if err != nil {
		return res, fmt.Errorf("payouts, channel %s on %s: %w", channel, day.Format(time.DateOnly), err)
	}
	res.Input, res.Channel, res.Run = format, channel, round
	return res, nil
}

// payoutsJSON is what the report says of the payouts' nights.
type payoutsJSON struct {
	Payouts       int `json:"payouts_per_night"`
	EarlierNights int `json:"earlier_nights"`
	// Tonight's statement: its entries and what was planted in it.
	Entries             int              `json:"entries"`
	Planted             map[string]int   `json:"planted"`
	ChannelFileBytes    int64            `json:"channel_file_bytes"`
	StatementBytes      int64            `json:"statement_bytes"`
	GenerateSeconds     float64          `json:"generate_seconds"`
	EarlierSetupSeconds float64          `json:"earlier_setup_seconds"`
	Earlier             []payoutRunJSON  `json:"earlier"`
	Runs                []runJSON        `json:"runs"`
	Summary             []runSummaryJSON `json:"run_summary"`
}

type payoutRunJSON struct {
	Date                 string         `json:"date"`
	ChannelWallSeconds   float64        `json:"channel_wall_seconds"`
	StatementWallSeconds float64        `json:"statement_wall_seconds"`
	StatementPeakRSSKiB  int64          `json:"statement_peak_rss_kib"`
	Counts               map[string]int `json:"counts"`
}

func (r *payoutsJSON) tonight(n PayoutNight, want Expected) {
	r.Entries, r.Planted = n.Entries, countsJSON(want.Counts)
	r.ChannelFileBytes, r.StatementBytes = n.ChannelBytes, n.StmtBytes
}

// payoutStages are the stage columns of the payouts' table: a statement
// night's, under the names the job logs them by.
var payoutStages = []string{"parse", "payouts", "match", "reports", "commit"}

// printPayouts prints the payouts' runs, each input's min and median
// when there are several, and what was planted.
func printPayouts(w io.Writer, size string, rep *Report, jobs []JobResult) {
	r := rep.Payouts
	if r == nil {
		return
	}
	head := []string{"payouts", "night", "rows", "wall s", "rows/s", "peak RSS MiB", "reports heap MiB"}
	table := [][]string{append(head, payoutStages...)}
	for _, g := range groupByInput(jobs) {
		what := "channel " + g[0].Input
		if g[0].Channel == bankChannel {
			what = "statement " + g[0].Input
		}
		for _, j := range g {
			label := what
			if len(g) > 1 {
				label = fmt.Sprintf("%s #%d", what, j.Run)
			}
			table = append(table, payoutCells(size, label, j))
		}
		if len(g) > 1 {
			table = append(table, payoutCells(size, what+" min", summarize(g, minOf)),
				payoutCells(size, what+" median", summarize(g, medianOf)))
		}
	}
	fmt.Fprintln(w)
	writeAligned(w, table)
	var planted []string
	for _, c := range reconcile.PayoutCategories {
		planted = append(planted, fmt.Sprintf("%s=%s", c, thousands(int64(r.Planted[string(c)]))))
	}
	fmt.Fprintf(w, "payouts: %s a night in the channel's file (%.1f MB), a camt.053 of %s entries (%.1f MB); planted tonight: %s\n",
		thousands(int64(r.Payouts)), float64(r.ChannelFileBytes)/1e6, thousands(int64(r.Entries)), float64(r.StatementBytes)/1e6,
		strings.Join(planted, " "))
	if r.EarlierNights > 0 {
		fmt.Fprintf(w, "payouts' earlier nights: %d, each a channel night and a statement night, run before tonight's; set up in %.1f s\n",
			r.EarlierNights, r.EarlierSetupSeconds)
	}
}

func payoutCells(size, label string, j JobResult) []string {
	cells := []string{size, label, thousands(int64(j.ChannelRows)), secs(j.Wall),
		thousands(perSecond(j.ChannelRows, j.Wall)), mib(j.MaxRSSKiB), mib(j.ReportsHeapBytes / 1024)}
	for _, name := range payoutStages {
		cell := "-"
		if d, ok := j.stage(name); ok {
			cell = secs(d)
		}
		cells = append(cells, cell)
	}
	return cells
}
