package matcher_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"reconcile"
	"reconcile/matcher"
)

// TestIntake: rows fed from one goroutine while the window is read by the
// intake's own, records coming before their rows, classify as the two
// read one after the other; a window that fails fails Finish; and a night
// that ends before Finish leaves no window running.
func TestIntake(t *testing.T) {
	var rows []reconcile.Transaction
	var locals []reconcile.LocalRecord
	for i := range 5000 {
		when := fmt.Sprintf("%02d:%02d", 9+i/600, i/10%60)
		key := fmt.Sprintf("O%05d", i)
		rows = append(rows, pay(key, "T"+key, int64(100+i%9), when))
		if i%7 != 3 {
			locals = append(locals, order(key, "PAID", int64(100+i%9+i%11/10), when))
		}
	}
	locals = append(locals, order("GONE", "PAID", 700, "10:00")) // missing from the file
	want := run(rows, locals)

	window := func(fail error) func(context.Context, func(*reconcile.LocalRow) error) (int, error) {
		return func(ctx context.Context, fn func(*reconcile.LocalRow) error) (int, error) {
			for _, l := range locals {
				r := l.Row()
				if err := fn(&r); err != nil {
					return 0, err
				}
			}
			return len(locals), fail
		}
	}
	in := matcher.NewIntake(day, matcher.Options{})
	in.StartWindow(context.Background(), window(nil))
	for _, r := range rows {
		in.Row(r)
	}
	in.FileRead()
	if ids := in.UnkeyedRefunds(); len(ids) != 0 {
		t.Errorf("unkeyed refunds: %q, want none", ids)
	}
	m, read, err := in.Finish(nil)
	if err != nil || read != len(locals) {
		t.Fatalf("Finish: %d read, %v; want %d and no error", read, err, len(locals))
	}
	if got := m.Classify(matcher.Known{}); !reflect.DeepEqual(got, want) {
		t.Errorf("beside the parse: %+v\none after the other: %+v", got.Counts, want.Counts)
	}

	broken := errors.New("the server went away")
	in = matcher.NewIntake(day, matcher.Options{})
	in.StartWindow(context.Background(), window(broken))
	in.FileRead()
	if _, _, err := in.Finish(nil); !errors.Is(err, broken) {
		t.Errorf("a window that fails: Finish gave %v, want %v", err, broken)
	}

	in = matcher.NewIntake(day, matcher.Options{})
	stopped := make(chan struct{})
	in.StartWindow(context.Background(), func(ctx context.Context, fn func(*reconcile.LocalRow) error) (int, error) {
		defer close(stopped)
		<-ctx.Done()
		return 0, ctx.Err()
	})
	in.Close()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Close left the window running")
	}
}
