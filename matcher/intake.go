package matcher

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"reconcile"
)

// Intake is a night's matcher while it is fed: the file's rows, from the
// goroutine that parses it (Row, then FileRead), and beside them the
// day's window of local records, which a goroutine of the intake's own
// reads a little behind the parse (StartWindow). Finish ends the intake
// and returns the matcher, for the rest of the night. The intake keeps
// its own lock: its callers take none.
//
// The parse is the job's work, the window mostly the database's; one
// after the other each left a processor half idle. A record whose key has
// no row yet waits for the rows to be all in. To keep those few, the
// window is read a little behind the parse in time: a batch of records
// goes to the matcher once the file's rows have reached windowLag past
// the latest of them. That suits files and tables that both run in time
// order, as settlement files and the window's orders nearly always do;
// where they do not, the records waiting are bounded, and past that bound
// the window waits for the end of the file.
type Intake struct {
	m  *Matcher
	mu sync.Mutex
	// rows counts the rows taken; the lock is held for windowBatch of
	// them at a time.
	rows int64
	// reached is the latest time of a row taken so far, in unix
	// nanoseconds; fileRead is closed when the parse ends.
	reached  atomic.Int64
	fileRead chan struct{}
	// maxEarly is how many records may wait for their rows before the
	// window waits for the end of the file.
	maxEarly int
	window   chan windowEnd // the window's outcome, when one was started
	stop     context.CancelFunc
}

type windowEnd struct {
	rows int
	err  error
}

const (
	// windowLag is how far in time the window stays behind the parse.
	windowLag = 5 * time.Minute
	// windowBatch is how many records go to the matcher at once, and how
	// many rows the parse gives it at once, under the intake's lock.
	windowBatch = 1024
)

// NewIntake returns the intake of a matcher for the business day.
func NewIntake(day reconcile.BusinessDay, opts Options) *Intake {
	m := newMatcher(day, opts)
	m.interleave()
	return &Intake{m: m, fileRead: make(chan struct{}), maxEarly: max(1<<16, opts.ExpectRows/50)}
}

// Row takes one row of the file, from the goroutine that parses it. Of a
// shard, another shard's refund row of one of its orders counts in its
// order's refunds, and another shard's payment may settle an order of
// one of its customers; a refund without our refund number belongs to a
// shard once its number is known (Finish).
func (in *Intake) Row(tx reconcile.Transaction) {
	if in.rows%windowBatch == 0 {
		in.mu.Lock()
	}
	if ns := tx.OccurredAt.UnixNano(); ns > in.reached.Load() {
		in.reached.Store(ns) // one writer: the parse
	}
	shard := in.m.opts.Shard
	switch {
	case shard.Owns(tx) || tx.Kind == reconcile.KindRefund && tx.RefundNo == "" || unplaced(tx):
		in.m.addRow(tx)
	case tx.Kind == reconcile.KindRefund && shard.Has(tx.OrderNo):
		in.m.addContextRow(tx)
	case tx.Kind == reconcile.KindPayment:
		in.m.addSettledElsewhere(tx)
	default:
		in.m.noteDisputed(tx, false) // another shard's chargeback: its order's duplicates wait (rule 14)
	}
	if in.rows++; in.rows%windowBatch == 0 {
		in.mu.Unlock()
	}
}

// unplaced reports whether tx is a dispute's event or a refund reversal
// that names no order: every shard takes it until its order is found by
// the payment's id (PlaceDisputes). One that did not complete is no
// event of a dispute: the first shard alone reports it.
func unplaced(tx reconcile.Transaction) bool {
	return (tx.Kind.Disputed() || tx.Kind == reconcile.KindRefundReversal) && tx.OrderNo == "" && tx.Status == reconcile.StatusSuccess
}

// FileRead says the parse has ended: every row of the file is in, or the
// parse failed. Call it once, from the parse's goroutine.
func (in *Intake) FileRead() {
	if in.rows%windowBatch != 0 {
		in.mu.Unlock()
	}
	close(in.fileRead)
}

// StartWindow reads the day's window of local records into the matcher
// beside the parse, in batches, a little behind it: load streams the
// records to the function it is given (the records may borrow its
// buffers) and returns how many it read. Finish waits for it.
func (in *Intake) StartWindow(ctx context.Context, load func(context.Context, func(*reconcile.LocalRow) error) (int, error)) {
	in.window = make(chan windowEnd, 1)
	ctx, in.stop = context.WithCancel(ctx)
	go func() {
		n, err := in.readWindow(ctx, load)
		in.window <- windowEnd{n, err}
	}()
}

func (in *Intake) readWindow(ctx context.Context, load func(context.Context, func(*reconcile.LocalRow) error) (int, error)) (int, error) {
	var batch localBatch
	var latest time.Time // of the batch's records
	early := 0
	flush := func() error {
		if err := in.waitFor(ctx, latest, early); err != nil {
			return err
		}
		in.mu.Lock()
		in.m.addLocalRows(batch.rows)
		early = len(in.m.early)
		in.mu.Unlock()
		batch.reset()
		return nil
	}
	got, err := load(ctx, func(r *reconcile.LocalRow) error {
		batch.add(r)
		if r.SettledAt.After(latest) {
			latest = r.SettledAt
		}
		if len(batch.rows) == windowBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return got, err
}

// waitFor waits until records as late as latest may go to the matcher:
// once the parse's rows have reached windowLag past it, or the parse has
// ended; and, with more than maxEarly records waiting for their rows,
// only once it has ended.
func (in *Intake) waitFor(ctx context.Context, latest time.Time, early int) error {
	for {
		select {
		case <-in.fileRead:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if early <= in.maxEarly && latest.Add(windowLag).UnixNano() <= in.reached.Load() {
			return nil
		}
		select {
		case <-in.fileRead:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// UnkeyedRefunds returns the channel refund ids of the file's refund rows
// that carry no refund number of ours, to be looked up in our records.
// Call it once the parse has ended.
func (in *Intake) UnkeyedRefunds() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.m.unkeyedRefunds()
}

// UnplacedDisputes returns the payment ids of the file's dispute events
// that name no order, to be looked up among our orders. Call it once the
// parse has ended.
func (in *Intake) UnplacedDisputes() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.m.unplacedDisputes()
}

// PlaceDisputes takes our orders holding the payment ids UnplacedDisputes
// asked for (OrderNo and ChannelTxnID set): Finish places the events on
// them.
func (in *Intake) PlaceDisputes(owners []reconcile.LocalRecord) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.m.disputeOwners = owners
}

// Finish ends the intake: the refund rows without our refund number get
// it from linked, our refunds whose channel refund ids UnkeyedRefunds
// asked for (RefundNo, OrderNo and ChannelTxnID set); the records that
// waited meet their rows, or none; and once the window is read, the
// matcher is returned with the number of the window's records.
func (in *Intake) Finish(linked []reconcile.LocalRecord) (*Matcher, int, error) {
	in.mu.Lock()
	in.m.resolveRefunds(linked)
	in.m.placeDisputes(in.m.disputeOwners)
	in.m.rowsDone()
	in.mu.Unlock()
	read := 0
	if in.window != nil {
		end := <-in.window
		in.window = nil
		if end.err != nil {
			return nil, 0, end.err
		}
		read = end.rows
	}
	m := in.m
	in.m = nil
	return m, read, nil
}

// Close stops the window, if it is still being read, and waits for it: a
// night that fails before Finish leaves nothing running.
func (in *Intake) Close() {
	if in.window == nil {
		return
	}
	in.stop()
	<-in.window
	in.window = nil
}

// localBatch holds copies of local records, whose text the driver's
// buffers held.
type localBatch struct {
	rows []reconcile.LocalRow
	text []byte
}

func (b *localBatch) add(r *reconcile.LocalRow) {
	var c reconcile.LocalRow
	c, b.text = r.CopyText(b.text)
	b.rows = append(b.rows, c)
}

// reset empties the batch. The matcher copied what it keeps.
func (b *localBatch) reset() {
	b.rows, b.text = b.rows[:0], b.text[:0]
}
