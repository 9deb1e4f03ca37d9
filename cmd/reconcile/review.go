package main

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"time"

	"reconcile"
	"reconcile/compensate"
	"reconcile/ledger"
	"reconcile/reports"
)

const reviewSynopsis = `reconcile review import FILE.xlsx [--reviewer NAME] [--dsn DSN] [--config FILE]
         [--log-level LEVEL]

Records the decisions written in the Decision column of a review workbook the
job wrote (approve, reject or investigate) on their findings, with the
reviewer and the time of the import. The reviewer of a line is its Reviewer
column, else --reviewer, else $USER.

A finding someone else decided since the workbook was written is not
overwritten: its line is reported as a conflict, naming who decided what and
when. Importing the same workbook again changes nothing. An approved
duplicate_payment or duplicate_refund is reversed under the same journal key
as an automatic reversal, so a channel row is never reversed twice.

Prints one line per decision and a closing line with the counts. Exit status
1 when any decision was not recorded (a conflict, an unknown finding, a
finding no longer open); the others are recorded all the same.`

func (a *App) reviewCmd(ctx context.Context, args []string) error {
	fs := a.newFlagSet("review", reviewSynopsis)
	reviewer := fs.String("reviewer", "", "reviewer `NAME` for lines whose Reviewer column is empty (default: $USER)")
	c := commonFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usagef("review", "no subcommand: try 'reconcile review import FILE.xlsx'")
	case pos[0] != "import":
		return usagef("review", "unknown subcommand %s: try 'reconcile review import FILE.xlsx'", reconcile.Quote(pos[0]))
	case len(pos) == 1:
		return usagef("review", "import needs the workbook: reconcile review import FILE.xlsx")
	case len(pos) > 2:
		return usagef("review", "unexpected argument %s: import takes one workbook", reconcile.Quote(pos[2]))
	}
	file := pos[1]
	cfg, err := loadConfig("review", c.config)
	if err != nil {
		return err
	}
	dsn, err := a.dsn("review", c.dsn, cfg)
	if err != nil {
		return err
	}

	lines, err := reports.ReadDecisions(file)
	if err != nil {
		return a.unreadable(file, err)
	}
	if *reviewer == "" {
		*reviewer = a.Getenv("USER")
	}
	decisions, err := decisionsOf(file, lines, *reviewer, a.Now())
	if err != nil {
		return err
	}

	log := a.newLogger(c.level).With("workbook", file)
	log.Debug("decisions read", "lines", len(decisions))
	db, err := ledger.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var tally ledger.Tally
	for _, d := range decisions {
		r, err := decide(ctx, db, d)
		if err != nil {
			// Each decision is its own transaction: what came before
			// stays recorded, and importing the file again resumes.
			fmt.Fprintln(a.Stdout, tally.String())
			return err
		}
		tally.Add(r)
		log.Debug("decision", "finding", d.Ref, "state", d.State, "reviewer", d.Reviewer, "outcome", r.Outcome, "posted", r.Posted)
		fmt.Fprintln(a.Stdout, d.Line(r))
	}
	fmt.Fprintln(a.Stdout, tally.String())
	return tally.Err()
}

// decisionsOf turns the workbook's lines into decisions, each by its
// line's reviewer, else by reviewer. Every line is checked before any is
// recorded: a decision nobody can be held to is worse than none.
func decisionsOf(file string, lines []reports.Decision, reviewer string, now time.Time) ([]ledger.Decision, error) {
	decisions := make([]ledger.Decision, len(lines))
	for i, l := range lines {
		who := l.Reviewer
		if who == "" {
			who = reviewer
		}
		if who == "" {
			return nil, usagef("review", "row %d of %s names no reviewer: fill its Reviewer column or pass --reviewer NAME", l.Row, file)
		}
		state, ok := reconcile.DecisionState(l.Decision)
		if !ok {
			return nil, fmt.Errorf("%s: row %d: unknown decision %s", file, l.Row, reconcile.Quote(l.Decision))
		}
		decisions[i] = ledger.Decision{Ref: l.Ref, Version: l.Version, State: state, Reviewer: who, Note: l.Note, At: now}
	}
	return decisions, nil
}

// decide records one decision, with the reversal it posts (an approved
// duplicate's, planned as the automatic ones are, so the journal key is
// the same).
func decide(ctx context.Context, db *ledger.DB, d ledger.Decision) (ledger.DecisionResult, error) {
	var reversal *reconcile.Journal
	if d.State == reconcile.StateApproved {
		f, err := db.FindingByRef(ctx, d.Ref)
		switch {
		case errors.Is(err, reconcile.ErrNotFound):
			// Decide reports it as a line, like any other miss.
		case err != nil:
			return ledger.DecisionResult{}, err
		default:
			if reversal, err = compensate.Decided(f.Channel, f.Finding, d.State); err != nil {
				return ledger.DecisionResult{}, err
			}
		}
	}
	return db.Decide(ctx, d, reversal)
}

// unreadable reports a workbook that cannot be imported. Every bad line is
// printed, so the workbook can be fixed in one pass; the error is one line.
func (a *App) unreadable(file string, err error) error {
	if m, ok := err.(interface{ Unwrap() []error }); ok && len(m.Unwrap()) > 1 {
		for _, e := range m.Unwrap() {
			fmt.Fprintf(a.Stderr, "reconcile review: %s\n", reconcile.Printable(e.Error()))
		}
		return fmt.Errorf("%s: %d lines cannot be read; nothing was recorded", file, len(m.Unwrap()))
	}
	if errors.Is(err, zip.ErrFormat) {
		return fmt.Errorf("%s is not an xlsx workbook; nothing was recorded", file)
	}
	return fmt.Errorf("%w; nothing was recorded", err)
}
