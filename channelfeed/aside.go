package channelfeed

import (
	"context"
	"sync"

	"reconcile"
)

// asideBatch is how many rows ParseFileAside hands on at a time: the two
// goroutines meet once a batch, not once a row.
const asideBatch = 1024

// ParseFileAside is ParseFile for a caller that does work of its own with
// every row, such as indexing it: it parses on the calling goroutine and
// hands the rows, in batches and in file order, to add on another, so on
// two processors the parser and add each have one instead of taking
// turns. add is called from that one goroutine only, and never after
// ParseFileAside returns. A row's text is lent: it holds while add has
// the row, and is then filled with later rows' (see textSlabs), so add
// copies what it keeps (reconcile.Transaction.Clone). On error, as with
// ParseFile, the rows add was given must be discarded.
func ParseFileAside(ctx context.Context, path, format string, opts Options, add func(reconcile.Transaction)) (FileInfo, error) {
	type batch struct {
		rows  []reconcile.Transaction
		slabs [][]byte // the text of rows, given back once they are added
	}
	batches := make(chan batch, 4)
	free := make(chan batch, 6) // emptied batches, to fill again
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range batches {
			for i := range b.rows {
				add(b.rows[i])
				b.rows[i] = reconcile.Transaction{} // let the row's text go
			}
			select {
			case free <- batch{b.rows[:0], b.slabs}:
			default:
			}
		}
	})
	opts.slabs = &textSlabs{}
	var b batch
	info, err := ParseFile(ctx, path, format, opts, func(tx reconcile.Transaction) error {
		if b.rows == nil {
			select {
			case b = <-free:
				opts.slabs.give(b.slabs)
			default:
				b.rows = make([]reconcile.Transaction, 0, asideBatch)
			}
		}
		b.rows = append(b.rows, tx)
		if len(b.rows) == asideBatch {
			batches <- batch{b.rows, opts.slabs.cut()}
			b = batch{}
		}
		return nil
	})
	if len(b.rows) > 0 {
		batches <- batch{b.rows, opts.slabs.cut()}
	}
	close(batches)
	wg.Wait()
	return info, err
}
