package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"reconcile"
)

// Rule 15 keeps three things per run, each counted while its run is
// current (SUCCEEDED, not superseded), so a corrected file or statement
// replaces what the one before said: the payouts a channel's file told
// of, the entries a bank statement held, and the payouts a statement
// night found the money of (arrivals).

// PayoutHorizon is how many days back a statement night looks: payouts
// expected since, and credits booked since, that nothing has settled. A
// payout missing for longer has been told and is the reviewer's; it is
// not carried night after night.
const PayoutHorizon = 60

var payoutColumns = []string{"run_id", "channel", "business_date", "payout_id", "reference", "amount_minor",
	"currency", "stated_minor", "expected_on", "row_count", "line"}

// keepPayouts writes the payouts of a channel's run.
func keepPayouts(ctx context.Context, tx pgx.Tx, run reconcile.Run, payouts []reconcile.Payout) error {
	if len(payouts) == 0 {
		return nil
	}
	date := dateOf(run.Day)
	row := make([]any, 0, len(payoutColumns)) // filled again for each: COPY encodes a row before the next
	src := pgx.CopyFromSlice(len(payouts), func(i int) ([]any, error) {
		p := &payouts[i]
		var stated any
		if p.HasStated {
			stated = p.Stated
		}
		row = append(row[:0], run.ID, run.Channel, date, p.ID, p.Reference, p.Amount, p.Currency, stated, p.ExpectedOn, p.Rows, p.Line)
		return row, nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"payouts"}, payoutColumns, src); err != nil {
		return err
	}
	return analyzeGrown(ctx, tx, "payouts", len(payouts))
}

// analyzeGrown analyzes a table the night has just written rows into
// when they are more than a tenth of what its statistics know of it
// (never analyzed: none), as autovacuum would, but before the next night
// is planned: nights run back to back (a statement of each day of a long
// weekend) would otherwise meet a table ten times the size its
// statistics say, and the anti-join of EarlierEntries planned as a
// nested loop took a second night of 10,000 entries 35 s, not 0.3. In
// the night's transaction, so its own rows are counted; past the first
// weeks a night is a small part of each table and nothing is done.
func analyzeGrown(ctx context.Context, tx pgx.Tx, table string, rows int) error {
	var known float64
	if err := tx.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = $1::text::regclass`, table).Scan(&known); err != nil {
		return fmt.Errorf("statistics of %s: %w", table, err)
	}
	if known >= 0 && float64(rows) <= known/10 {
		return nil
	}
	if _, err := tx.Exec(ctx, "ANALYZE "+pgx.Identifier{table}.Sanitize()); err != nil {
		return fmt.Errorf("analyze %s: %w", table, err)
	}
	return nil
}

var entryColumns = []string{"run_id", "account", "entry_key", "statement_id", "amount_minor", "currency", "credit",
	"reversal", "status", "booked_on", "value_on", "bank_ref", "end_to_end_id", "type_code", "counterparty",
	"remittance", "line"}

// keepStatement writes the entries of a statement's run and the payouts
// it found the money of.
func keepStatement(ctx context.Context, tx pgx.Tx, run reconcile.Run, entries []reconcile.KeyedEntry, arrivals []reconcile.PayoutArrival) error {
	// One row's values, filled again for each: COPY encodes a row before
	// it asks for the next.
	row := make([]any, 0, len(entryColumns))
	if len(entries) > 0 {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"bank_entries"}, entryColumns,
			pgx.CopyFromSlice(len(entries), func(i int) ([]any, error) {
				e := &entries[i]
				row = append(row[:0], run.ID, e.Account, e.Key, e.Statement, e.Amount, e.Currency, e.Credit, e.Reversal, e.Status,
					nullTime(e.BookedOn), nullTime(e.ValueOn), e.BankRef, e.EndToEndID, e.TypeCode, e.Counterparty,
					e.Remittance, e.Line)
				return row, nil
			}))
		if err != nil {
			return fmt.Errorf("entries: %w", err)
		}
		if err := analyzeGrown(ctx, tx, "bank_entries", len(entries)); err != nil {
			return err
		}
	}
	if len(arrivals) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"payout_arrivals"},
		[]string{"run_id", "channel", "payout_id", "entry_keys", "amount_minor", "arrived_on", "short", "returned"},
		pgx.CopyFromSlice(len(arrivals), func(i int) ([]any, error) {
			a := &arrivals[i]
			return append(row[:0], run.ID, a.Channel, a.PayoutID, a.Keys, a.Amount, a.On, a.Short, a.Returned), nil
		}))
	if err != nil {
		return fmt.Errorf("arrivals: %w", err)
	}
	return analyzeGrown(ctx, tx, "payout_arrivals", len(arrivals))
}

// currentRuns is the runs whose word counts on a statement night of a
// bank channel ($1) and date ($2): every current run but those of that
// channel and date, which the night redoes.
const currentRuns = `
SELECT id FROM runs
 WHERE status = 'SUCCEEDED' AND superseded_by IS NULL AND NOT (channel = $1 AND business_date = $2)`

// OpenPayouts returns the payouts of channels (nil: of every channel) a
// statement night of bank on day looks for: those of current runs
// expected within PayoutHorizon days, the latest date's word for a
// payout two files told of; each with what current runs said of it
// (arrived, told missing). A payout that arrived more than window days
// before day is done with.
//
// The payouts' arrivals are met by one join, and those done with are
// left in the database: asked once per payout of the horizon, most of
// them arrived weeks ago, the arrivals cost a night of 100,000 payouts
// 6.9 s of 8 nights' 800,000 (docs/performance.md).
func (db *DB) OpenPayouts(ctx context.Context, bank string, day reconcile.BusinessDay, channels []string, window int) ([]reconcile.OpenPayout, error) {
	rows, err := db.pool.Query(ctx, `
WITH cur AS (`+currentRuns+`),
latest AS (
  SELECT DISTINCT ON (p.channel, p.payout_id) p.*
    FROM payouts p JOIN cur ON cur.id = p.run_id
   WHERE ($3::text[] IS NULL OR p.channel = ANY($3::text[])) AND p.expected_on >= $2::date - $4::int
   ORDER BY p.channel, p.payout_id, p.business_date DESC, p.run_id DESC),
arrived AS (
  SELECT a.channel, a.payout_id, max(a.arrived_on) FILTER (WHERE NOT a.returned) AS arrived_on,
         sum(a.amount_minor) FILTER (WHERE NOT a.returned)::bigint AS amount, bool_or(a.returned) AS returned
    FROM payout_arrivals a JOIN cur ON cur.id = a.run_id
    JOIN latest l ON l.channel = a.channel AND l.payout_id = a.payout_id
   GROUP BY a.channel, a.payout_id)
SELECT l.channel, l.payout_id, l.reference, l.amount_minor, l.currency, coalesce(l.stated_minor, 0),
       l.stated_minor IS NOT NULL, l.expected_on, l.row_count, l.line,
       EXISTS (SELECT 1 FROM findings f JOIN cur ON cur.id = f.run_id
                WHERE f.category = 'payout_missing' AND f.payout_channel = l.channel AND f.payout_id = l.payout_id
                  AND f.state <> 'SUPERSEDED'),
       ar.arrived_on, coalesce(ar.amount, 0), coalesce(ar.amount <> l.amount_minor, false), coalesce(ar.returned, false),
       EXISTS (SELECT 1 FROM findings f JOIN cur ON cur.id = f.run_id
                WHERE f.category = 'payout_amount_mismatch' AND f.payout_channel = l.channel AND f.payout_id = l.payout_id
                  AND f.state <> 'SUPERSEDED')
  FROM latest l LEFT JOIN arrived ar ON ar.channel = l.channel AND ar.payout_id = l.payout_id
 WHERE ar.arrived_on IS NULL OR ar.arrived_on >= $2::date - $5::int
 ORDER BY l.expected_on, l.channel, l.payout_id`, bank, dateOf(day), channels, PayoutHorizon, window)
	if err != nil {
		return nil, fmt.Errorf("open payouts: %w", interpretError(err))
	}
	defer rows.Close()
	var out []reconcile.OpenPayout
	for rows.Next() {
		var (
			p       reconcile.OpenPayout
			arrived *time.Time
		)
		if err := rows.Scan(&p.Channel, &p.ID, &p.Reference, &p.Amount, &p.Currency, &p.Stated, &p.HasStated,
			&p.ExpectedOn, &p.Rows, &p.Line, &p.Told, &arrived, &p.ArrivedAmount, &p.Short, &p.Returned, &p.ShortTold); err != nil {
			return nil, fmt.Errorf("open payouts: %w", interpretError(err))
		}
		if arrived != nil {
			p.Arrived, p.ArrivedOn = true, *arrived
		}
		out = append(out, p)
	}
	return out, interpretError(rows.Err())
}

// EarlierEntries returns the booked entries of bank's statements of
// dates before day, within PayoutHorizon days of it, that no current
// arrival took, each once (the latest statement's where two held it),
// with whether a current run told it (unexpected, or a return no one
// payout could be named for). Debits come back too:
// a payout the channel takes from us may be told after its debit.
//
// The entries taken are the current arrivals' keys, unnested, met by a
// hash anti-join: one pass over each table, where probing an index of
// the arrays once per entry cost a night of 100,000 entries minutes
// (docs/performance.md). An arrival is dated by the last of its
// entries, so one that took an entry of the horizon arrived within it.
// Statements of later dates are not read: a date done again sees what
// it saw, not what came after it.
func (db *DB) EarlierEntries(ctx context.Context, bank string, day reconcile.BusinessDay) ([]reconcile.KeyedEntry, error) {
	rows, err := db.pool.Query(ctx, `
WITH cur AS (`+currentRuns+`),
taken AS (
  SELECT k.entry_key FROM payout_arrivals a JOIN cur c3 ON c3.id = a.run_id, unnest(a.entry_keys) AS k(entry_key)
   WHERE a.arrived_on >= $2::date - $3::int)
SELECT DISTINCT ON (e.account, e.entry_key)
       e.account, e.entry_key, e.statement_id, e.amount_minor, e.currency, e.credit, e.reversal, e.booked_on, e.value_on,
       e.bank_ref, e.end_to_end_id, e.type_code, e.counterparty, e.remittance, e.line,
       EXISTS (SELECT 1 FROM findings f JOIN cur c2 ON c2.id = f.run_id
                WHERE f.category IN ('unexpected_credit', 'payout_returned') AND f.bank_account = e.account AND f.channel_txn_id = e.entry_key
                  AND f.state <> 'SUPERSEDED')
  FROM bank_entries e JOIN cur ON cur.id = e.run_id JOIN runs r ON r.id = e.run_id
 WHERE r.channel = $1 AND r.business_date < $2 AND e.status = 'BOOK'
   AND coalesce(e.booked_on, e.value_on) >= $2::date - $3::int
   AND NOT EXISTS (SELECT 1 FROM taken t WHERE t.entry_key = e.entry_key)
 ORDER BY e.account, e.entry_key, r.business_date DESC`, bank, dateOf(day), PayoutHorizon)
	if err != nil {
		return nil, fmt.Errorf("earlier entries: %w", interpretError(err))
	}
	defer rows.Close()
	var out []reconcile.KeyedEntry
	for rows.Next() {
		var (
			c               reconcile.KeyedEntry
			booked, valueOn *time.Time
		)
		if err := rows.Scan(&c.Account, &c.Key, &c.Statement, &c.Amount, &c.Currency, &c.Credit, &c.Reversal, &booked, &valueOn,
			&c.BankRef, &c.EndToEndID, &c.TypeCode, &c.Counterparty, &c.Remittance, &c.Line, &c.Told); err != nil {
			return nil, fmt.Errorf("earlier entries: %w", interpretError(err))
		}
		c.Status, c.Earlier = "BOOK", true
		if booked != nil {
			c.BookedOn = *booked
		}
		if valueOn != nil {
			c.ValueOn = *valueOn
		}
		out = append(out, c)
	}
	return out, interpretError(rows.Err())
}
