package main

import (
	"context"
	"sync"

	"reconcile"
	"reconcile/channelfeed"
)

// parseBatch is how many rows the parser hands the index at a time.
const parseBatch = 1024

// parseAside parses a settlement file on the calling goroutine and hands
// its rows, in batches and in order, to add on another: on two processors
// the parser and the index each have one, instead of taking turns. add is
// called from one goroutine only, and never after parseAside returns.
func parseAside(ctx context.Context, path, format string, opts channelfeed.Options,
	add func(reconcile.Transaction)) (channelfeed.FileInfo, error) {
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
	info, err := channelfeed.ParseFile(ctx, path, format, opts, func(tx reconcile.Transaction) error {
		if batch == nil {
			select {
			case batch = <-free:
			default:
				batch = make([]reconcile.Transaction, 0, parseBatch)
			}
		}
		batch = append(batch, tx)
		if len(batch) == parseBatch {
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
