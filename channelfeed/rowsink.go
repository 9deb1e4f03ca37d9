package channelfeed

import (
	"context"
	"math"
	"strings"
	"time"

	"reconcile"
)

// ctxEvery is how many rows are parsed between two looks at the context:
// often enough to stop a large file promptly, rarely enough to cost nothing.
const ctxEvery = 4096

// rowSink is the one way a parser hands on the rows it reads, so what
// becomes of a row once read is the same in every format. put holds a
// row to what every format must hold, whatever the file says: its keys
// and channel id at most reconcile.MaxKeyBytes long, its time within
// Options.Earliest and Latest, and a chargeback reversal no larger than
// the chargebacks of its dispute before it in the file. It then hands
// the row to emit and counts it; skip counts a row read and not handed
// on (a blank one, one before the header). Every ctxEvery rows counted
// the sink looks at the context, so every format stops a large file the
// same way.
type rowSink struct {
	ctx    context.Context
	opts   Options
	window bool // Earliest or Latest is set
	emit   func(reconcile.Transaction) error
	rows   int // rows read, emitted or not

	// reversalColumn is the header's name of the column a chargeback
	// reversal's amount is read from, which the error of one too large
	// names; set by a parser whose rows may be reversals.
	reversalColumn string
	// charged is, by dispute and currency, what the chargebacks of the
	// file read so far took; nil until the first. Only a dispute's events
	// are remembered, so a file without them costs nothing.
	charged map[disputeKey]int64
}

// disputeKey is a dispute's money in one currency.
type disputeKey struct{ id, currency string }

// newRowSink puts rows to emit; a nil emit only validates. A context
// already done is its error: the file is not read at all. The sink is a
// value, which stays on the parser's stack.
func newRowSink(ctx context.Context, opts Options, emit func(reconcile.Transaction) error) (rowSink, error) {
	if err := ctx.Err(); err != nil {
		return rowSink{}, err
	}
	if emit == nil {
		emit = discard
	}
	window := !opts.Earliest.IsZero() || !opts.Latest.IsZero()
	return rowSink{ctx: ctx, opts: opts, window: window, emit: emit}, nil
}

// put hands on t, a row as a format's row function returns it: err, the
// function's error, is returned as is.
func (s *rowSink) put(t reconcile.Transaction, err error) error {
	if err != nil {
		return err
	}
	if why := reconcile.KeyFault(&t); why != "" {
		return s.opts.errorf(t.Line, "", "%s", why)
	}
	if s.window {
		if err := s.opts.checkTime(&t); err != nil {
			return err
		}
	}
	// An event without a dispute id is of no dispute the file shows.
	if t.Kind.Disputed() && t.DisputeID != "" {
		if err := s.checkDispute(&t); err != nil {
			return err
		}
	}
	if err := s.emit(t); err != nil {
		return err
	}
	return s.skip()
}

// checkDispute adds t, a dispute's event, to the chargebacks of its
// dispute, or refuses it, a chargeback reversal, when it gives back more
// than those of this file took, in its currency. Only this file's
// chargebacks are known here: a reversal of one booked in an earlier
// file, or reversals that together give back more than was taken, are
// the matcher's to find across nights.
func (s *rowSink) checkDispute(t *reconcile.Transaction) error {
	key := disputeKey{t.DisputeID, t.Currency}
	if t.Kind == reconcile.KindChargebackReversal {
		charged, ok := s.charged[key]
		if ok && t.Amount > charged {
			return s.opts.errorf(t.Line, s.reversalColumn, "chargeback reversal of %s is more than the %s the chargebacks of dispute %s took before it in the file",
				reconcile.FormatAmount(t.Amount, t.Currency), reconcile.FormatAmount(charged, t.Currency), reconcile.Quote(t.DisputeID))
		}
		return nil
	}
	if s.charged == nil {
		s.charged = map[disputeKey]int64{}
	}
	sum, ok := reconcile.AddChecked(s.charged[key], t.Amount)
	if !ok {
		// No reversal can be larger.
		sum = math.MaxInt64
	}
	// The row's text may be lent (textSlabs): the key is kept past it.
	s.charged[disputeKey{strings.Clone(key.id), strings.Clone(key.currency)}] = sum
	return nil
}

// skip counts a row read and, every ctxEvery rows, returns the context's
// error.
func (s *rowSink) skip() error {
	s.rows++
	if s.rows%ctxEvery == 0 {
		return s.ctx.Err()
	}
	return nil
}

// checkTime refuses a row whose time is outside the window of Earliest
// and Latest: a row of year 0, 9999 or 1999 in a file of 2026 is a
// misread column or a damaged file, not a settlement of the day.
func (o Options) checkTime(t *reconcile.Transaction) error {
	at := t.OccurredAt
	if (o.Earliest.IsZero() || !at.Before(o.Earliest)) && (o.Latest.IsZero() || !at.After(o.Latest)) {
		return nil
	}
	show := func(t time.Time) string { return t.In(o.location()).Format(time.RFC3339Nano) }
	window := show(o.Earliest) + " to " + show(o.Latest)
	switch {
	case o.Latest.IsZero():
		window = "from " + show(o.Earliest) + " on"
	case o.Earliest.IsZero():
		window = "up to " + show(o.Latest)
	}
	return o.errorf(t.Line, "", "row time %s is outside the window %s", show(at), window)
}

func discard(reconcile.Transaction) error { return nil }
