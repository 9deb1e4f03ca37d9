package nightly

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"reconcile"
)

// The day's window of local records is read while the file is parsed: the
// parse is the job's work, the window mostly the server's, and one after
// the other each left a processor half idle. The matcher takes both
// (matcher.Interleave); a record whose key has no row yet waits for the
// rows to be all in. To keep those few, the window is read a little
// behind the parse in time: a batch of records goes to the matcher once
// the file's rows have reached windowLag past the latest of them. That
// suits files and tables that both run in time order, as settlement files
// and the window's orders nearly always do; where they do not, the
// records held are bounded, and past that bound the window waits for the
// end of the file.

const (
	// windowLag is how far in time the window stays behind the parse.
	windowLag = 5 * time.Minute
	// windowBatch is how many records are handed to the matcher at once,
	// under its lock.
	windowBatch = 1024
)

// beside is what the parse and the window share: the matcher's lock, the
// time the file's rows have reached, and the end of the file.
type beside struct {
	mu sync.Mutex
	// reached is the latest time of a row indexed so far, in unix
	// nanoseconds.
	reached  atomic.Int64
	fileRead chan struct{} // closed when the parse ends
	// maxEarly is how many records may wait for their rows before the
	// window waits for the end of the file.
	maxEarly int
}

func newBeside(expectRows int) *beside {
	return &beside{fileRead: make(chan struct{}), maxEarly: max(1<<16, expectRows/50)}
}

// reach notes the time of a row indexed.
func (b *beside) reach(at time.Time) {
	if ns := at.UnixNano(); ns > b.reached.Load() {
		b.reached.Store(ns) // one writer: the parse
	}
}

// streamWindow reads the day's window into the matcher, in batches, a
// little behind the parse.
func (n *night) streamWindow(ctx context.Context) (int, error) {
	spec, b := n.spec, n.beside
	var batch localBatch
	var latest time.Time // of the batch's records
	early := 0
	flush := func() error {
		if err := b.waitFor(ctx, latest, early); err != nil {
			return err
		}
		b.mu.Lock()
		n.m.AddLocalRows(batch.rows)
		early = n.m.Early()
		b.mu.Unlock()
		batch.reset()
		return nil
	}
	got, err := n.db.LoadWindow(ctx, spec.Channel, spec.Day, spec.Shard, func(r *reconcile.LocalRow) error {
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
func (b *beside) waitFor(ctx context.Context, latest time.Time, early int) error {
	for {
		select {
		case <-b.fileRead:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if early <= b.maxEarly && latest.Add(windowLag).UnixNano() <= b.reached.Load() {
			return nil
		}
		select {
		case <-b.fileRead:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
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
