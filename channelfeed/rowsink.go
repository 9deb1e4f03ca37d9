package channelfeed

import (
	"context"
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
// Options.Earliest and Latest. It then hands the row to emit and counts
// it; skip counts a row read and not handed on (a blank one, one before
// the header). Every ctxEvery rows counted the sink looks at the context,
// so every format stops a large file the same way.
type rowSink struct {
	ctx    context.Context
	opts   Options
	window bool // Earliest or Latest is set
	emit   func(reconcile.Transaction) error
	rows   int // rows read, emitted or not
}

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
	if err := s.emit(t); err != nil {
		return err
	}
	return s.skip()
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
