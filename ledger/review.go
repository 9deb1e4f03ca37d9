package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// Decision is a person's word on a finding, as read from a review workbook.
type Decision struct {
	Ref      string
	Version  int             // the version the reviewer saw (the workbook's Version column)
	State    reconcile.State // StateApproved, StateRejected or StateInvestigating
	Reviewer string
	Note     string
	At       time.Time // zero means the database's now()
}

// Outcomes of a decision.
const (
	OutcomeRecorded = "recorded"
	// OutcomeUnchanged is the same decision by the same person, already
	// recorded: the workbook was imported before.
	OutcomeUnchanged = "unchanged"
	// OutcomeConflict is a finding someone changed since the version the
	// decision was made on; it is left as it is.
	OutcomeConflict = "conflict"
	OutcomeNotFound = "not found"
	// OutcomeNotOpen is a finding no person decides: reversed
	// automatically, superseded by a newer run, or a settled pending record.
	OutcomeNotOpen = "not open"
)

// DecisionResult says what became of one decision.
type DecisionResult struct {
	Ref     string
	Outcome string
	Detail  string // for a conflict: who decided what and when; for a reversal: the journal key
	Posted  bool   // a reversal journal was newly posted
}

// Decide records one decision in one transaction. The update is
// conditional on the version the reviewer saw and on the finding still
// waiting for a person (OPEN, or INVESTIGATING, which may still be
// approved or rejected), so two reviewers cannot overwrite each other: the
// second gets a conflict naming the first. The same decision again is
// unchanged, which makes importing a workbook twice harmless.
//
// reversal, when not nil, is the reversal journal of an approved
// duplicate. It goes through the same ON CONFLICT (idempotency_key) path as
// the automatic reversals, in the same transaction as the state change,
// and the finding points at it; a key already posted is not posted again.
// It is refused unless the decision approves a duplicate_payment or
// duplicate_refund finding whose channel and channel id it reverses.
func (db *DB) Decide(ctx context.Context, d Decision, reversal *reconcile.Journal) (DecisionResult, error) {
	res := DecisionResult{Ref: d.Ref}
	if err := checkDecision(d, reversal); err != nil {
		return res, fmt.Errorf("decide %s: %w", d.Ref, err)
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var runID, category, channel, txnID, fingerprint string
		err := tx.QueryRow(ctx, `
UPDATE findings
   SET state = $3, decided_by = $4, decided_at = coalesce($5, now()), note = $6, version = version + 1
 WHERE ref = $1 AND version = $2 AND state IN ('OPEN', 'INVESTIGATING')
RETURNING run_id, category, coalesce(channel, ''), coalesce(channel_txn_id, ''), coalesce(row_fingerprint, '')`,
			d.Ref, d.Version, d.State, d.Reviewer, nullTime(d.At), nullString(d.Note)).
			Scan(&runID, &category, &channel, &txnID, &fingerprint)
		if errors.Is(err, pgx.ErrNoRows) {
			res.Outcome, res.Detail, err = whyNotDecided(ctx, tx, d)
			return err
		}
		if err != nil {
			return err
		}
		res.Outcome = OutcomeRecorded
		if reversal == nil {
			return nil
		}
		if !reconcile.Category(category).Reversible() {
			return fmt.Errorf("a reversal journal for a %s finding: only duplicates are reversed", category)
		}
		if reversal.Channel != channel || reversal.ChannelTxnID != txnID ||
			txnID == "" && fingerprint != "" && reversal.Row != "row:"+fingerprint {
			return fmt.Errorf("journal %s reverses %s %s, the finding is %s %s",
				reversal.IdempotencyKey, reversal.Channel, reversal.Row, channel, txnID+fingerprint)
		}
		// Rows without a channel id were all reversed under one key once.
		key, n := "", 0
		if txnID == "" {
			key, err = sharedKeyOf(ctx, tx, d.Ref, channel)
			if err != nil {
				return err
			}
		}
		if key == "" {
			key = reversal.IdempotencyKey
			if n, err = postJournals(ctx, tx, runID, []reconcile.Journal{*reversal}); err != nil {
				return fmt.Errorf("post journal %s: %w", key, err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE findings SET journal_key = $2 WHERE ref = $1`, d.Ref, key); err != nil {
			return err
		}
		res.Posted = n == 1
		res.Detail = "journal " + key
		if !res.Posted {
			// Another path reversed the same channel row first; one row
			// gets one journal, and this finding points at it too.
			res.Detail += " (already posted)"
		}
		return nil
	})
	if err != nil {
		return DecisionResult{Ref: d.Ref}, fmt.Errorf("decide %s: %w", d.Ref, interpretError(err))
	}
	return res, nil
}

// sharedKeyOf returns the journal that reversed the row of finding ref, a
// row without a channel id, when that was done before rows had
// fingerprints: every such row of a channel was then reversed under the
// one key reversal/<channel>/. A finding of an earlier run about the same
// row (the same kind, numbers, amount, currency and time) that points at
// that key means the row is reversed already; "" when there is none.
func sharedKeyOf(ctx context.Context, tx pgx.Tx, ref, channel string) (string, error) {
	var key string
	err := tx.QueryRow(ctx, `
SELECT o.journal_key
  FROM findings f
  JOIN findings o ON o.channel = f.channel AND o.kind = f.kind AND o.ref <> f.ref
                 AND coalesce(o.channel_txn_id, '') = '' AND o.row_fingerprint IS NULL
                 AND o.journal_key = 'reversal/' || f.channel || '/'
                 AND o.order_no IS NOT DISTINCT FROM f.order_no AND o.refund_no IS NOT DISTINCT FROM f.refund_no
                 AND o.channel_amount = f.channel_amount AND o.currency = f.currency
                 AND o.occurred_at = f.occurred_at
 WHERE f.ref = $1 AND f.channel = $2
 LIMIT 1`, ref, channel).Scan(&key)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return key, err
}

// checkDecision refuses what the database would refuse, or what would
// record a decision nobody can be held to, before a transaction starts.
func checkDecision(d Decision, reversal *reconcile.Journal) error {
	if d.Ref == "" {
		return errors.New("no finding reference")
	}
	switch d.State {
	case reconcile.StateApproved, reconcile.StateRejected, reconcile.StateInvestigating:
	default:
		return fmt.Errorf("%q is not a decision: want %s, %s or %s", d.State,
			reconcile.StateApproved, reconcile.StateRejected, reconcile.StateInvestigating)
	}
	if d.Reviewer == "" {
		return errors.New("no reviewer: every decision names who took it")
	}
	if reversal == nil {
		return nil
	}
	if d.State != reconcile.StateApproved {
		return fmt.Errorf("a reversal journal with a %s decision: only an approval reverses", d.State)
	}
	if reversal.Kind != reconcile.JournalKindReversal {
		return fmt.Errorf("journal %s is of kind %q, want %q", reversal.IdempotencyKey, reversal.Kind, reconcile.JournalKindReversal)
	}
	_, _, err := checkJournals(&reconcile.Result{Journals: []reconcile.Journal{*reversal}})
	return err
}

// whyNotDecided reads the finding a conditional update missed and says why.
func whyNotDecided(ctx context.Context, tx pgx.Tx, d Decision) (outcome, detail string, err error) {
	var (
		state   reconcile.State
		version int
		by      *string
		at      *time.Time
	)
	err = tx.QueryRow(ctx, `SELECT state, version, decided_by, decided_at FROM findings WHERE ref = $1`, d.Ref).
		Scan(&state, &version, &by, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return OutcomeNotFound, "no finding has this reference", nil
	}
	if err != nil {
		return "", "", err
	}
	decided := by != nil
	switch {
	case decided && state == d.State && *by == d.Reviewer:
		return OutcomeUnchanged, fmt.Sprintf("already %s", decidedBy(state, *by, at)), nil
	case !decided && state != reconcile.StateOpen && state != reconcile.StateInvestigating:
		return OutcomeNotOpen, fmt.Sprintf("the finding is %s: there is nothing to decide", state), nil
	case decided:
		return OutcomeConflict, fmt.Sprintf("%s (version %d; this decision was made on version %d): not overwritten",
			decidedBy(state, *by, at), version, d.Version), nil
	default:
		return OutcomeConflict, fmt.Sprintf("the finding is %s at version %d, this decision was made on version %d: not overwritten",
			state, version, d.Version), nil
	}
}

// decidedBy says who decided what and when, in the operator's time zone.
func decidedBy(state reconcile.State, by string, at *time.Time) string {
	s := string(state) + " by " + by
	if at != nil {
		s += " at " + at.Local().Format("2006-01-02 15:04 MST")
	}
	return s
}

// ReviewedFinding is a finding with where its review stands.
type ReviewedFinding struct {
	reconcile.Finding
	RunID      string
	Channel    string
	State      reconcile.State
	Version    int
	DecidedBy  string    // empty until a person decides
	DecidedAt  time.Time // zero until a person decides
	Note       string
	JournalKey string // the reversal journal the finding points at, if any
}

// FindingByRef returns the finding named ref with its state and version,
// or reconcile.ErrNotFound.
func (db *DB) FindingByRef(ctx context.Context, ref string) (ReviewedFinding, error) {
	fs, err := db.queryFindings(ctx, "finding "+ref, `WHERE f.ref = $1`, ref)
	if err != nil {
		return ReviewedFinding{}, err
	}
	if len(fs) == 0 {
		return ReviewedFinding{}, fmt.Errorf("finding %s: %w", ref, reconcile.ErrNotFound)
	}
	// The columns read here are the only ones that change after a run
	// writes a finding, so reading them apart from the rest is consistent.
	rf := ReviewedFinding{Finding: fs[0]}
	var (
		channel, by, note, key *string
		at                     *time.Time
	)
	err = db.pool.QueryRow(ctx, `
SELECT run_id, channel, state, version, decided_by, decided_at, note, journal_key
  FROM findings WHERE ref = $1`, ref).
		Scan(&rf.RunID, &channel, &rf.State, &rf.Version, &by, &at, &note, &key)
	if err != nil {
		return ReviewedFinding{}, fmt.Errorf("finding %s: %w", ref, interpretError(err))
	}
	for _, p := range []struct {
		dst *string
		src *string
	}{{&rf.Channel, channel}, {&rf.DecidedBy, by}, {&rf.Note, note}, {&rf.JournalKey, key}} {
		if p.src != nil {
			*p.dst = *p.src
		}
	}
	if at != nil {
		rf.DecidedAt = *at
	}
	return rf, nil
}

// Line is the decision's line in an import's output: reference, outcome
// and detail, printable whatever the workbook held.
func (d Decision) Line(r DecisionResult) string {
	detail := r.Detail
	if r.Outcome == OutcomeRecorded {
		what := string(d.State) + " by " + d.Reviewer
		if r.Posted {
			detail += " posted"
		}
		if detail != "" {
			what += "; " + detail
		}
		detail = what
	}
	line := d.Ref + " " + r.Outcome
	if detail != "" {
		line += ": " + detail
	}
	// References and names come from a file people edit.
	return reconcile.Printable(line)
}

// Tally counts the outcomes of an import's decisions.
type Tally struct {
	total, recorded, unchanged, conflicts, notFound, notOpen, posted int
}

// Add counts one outcome.
func (t *Tally) Add(r DecisionResult) {
	t.total++
	switch r.Outcome {
	case OutcomeRecorded:
		t.recorded++
	case OutcomeUnchanged:
		t.unchanged++
	case OutcomeConflict:
		t.conflicts++
	case OutcomeNotFound:
		t.notFound++
	case OutcomeNotOpen:
		t.notOpen++
	}
	if r.Posted {
		t.posted++
	}
}

// String is the import's closing line.
func (t *Tally) String() string {
	s := fmt.Sprintf("%s: %d recorded, %d unchanged, %s, %d not found, %d not open; %s posted",
		plural(t.total, "decision"), t.recorded, t.unchanged, plural(t.conflicts, "conflict"),
		t.notFound, t.notOpen, plural(t.posted, "journal"))
	if n := t.total - t.recorded - t.unchanged; n > 0 {
		s += fmt.Sprintf("; %d NOT recorded", n)
	}
	return s
}

// Err is why the import did not fully succeed, or nil.
func (t *Tally) Err() error {
	n := t.total - t.recorded - t.unchanged
	if n == 0 {
		return nil
	}
	var why []string
	for _, c := range []struct {
		n    int
		what string
	}{{t.conflicts, plural(t.conflicts, "conflict")}, {t.notFound, fmt.Sprintf("%d not found", t.notFound)},
		{t.notOpen, fmt.Sprintf("%d no longer open", t.notOpen)}} {
		if c.n > 0 {
			why = append(why, c.what)
		}
	}
	msg := fmt.Sprintf("%s not recorded (%s)", plural(n, "decision"), strings.Join(why, ", "))
	if n < t.total {
		msg += "; the others were"
	}
	return errors.New(msg)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
