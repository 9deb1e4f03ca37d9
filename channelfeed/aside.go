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
// ParseFileAside returns. On error, as with ParseFile, the rows add was
// given must be discarded.
func ParseFileAside(ctx context.Context, path, format string, opts Options, add func(reconcile.Transaction)) (FileInfo, error) {
	batches := make(chan []reconcile.Transaction, 4)
	free := make(chan []reconcile.Transaction, 6) // emptied batches, to fill again
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range batches {
			for i := range b {
				add(b[i])
				b[i] = reconcile.Transaction{} // let the row's text go
			}
			select {
			case free <- b[:0]:
			default:
			}
		}
	})
	var batch []reconcile.Transaction
	info, err := ParseFile(ctx, path, format, opts, func(tx reconcile.Transaction) error {
		if batch == nil {
			select {
			case batch = <-free:
			default:
				batch = make([]reconcile.Transaction, 0, asideBatch)
			}
		}
		batch = append(batch, tx)
		if len(batch) == asideBatch {
			batches <- batch
			batch = nil
		}
		return nil
	})
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	wg.Wait()
	return info, err
}
