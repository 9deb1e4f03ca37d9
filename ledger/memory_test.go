package ledger_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// TestMemoryParts: a night's memory is kept as parts and a filter; the
// next night is given the filter, and gets back exactly the parts it
// chooses, in order; a night remembered before filters is read whole; a
// night without rows keeps its filter alone.
func TestMemoryParts(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	mem := ledger.Memory{
		Bits:   5,
		Filter: bytes.Repeat([]byte{0xA5}, 64),
		Parts: []ledger.MemoryPart{
			{Index: 0, Rows: 2, Records: bytes.Repeat([]byte{1}, 80)},
			{Index: 1, Rows: 1, Records: bytes.Repeat([]byte{2}, 40)},
			{Index: 3, Rows: 3, Records: bytes.Repeat([]byte{3}, 120)},
		},
	}
	run := startRun(t, db, "run-mem")
	if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: result(run), Memory: mem}); err != nil {
		t.Fatalf("CompleteRun: %v", err)
	}
	var rows int
	if err := db.Pool().QueryRow(ctx, `SELECT sum(rows) FROM settled_keys WHERE run_id = 'run-mem'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 6 {
		t.Errorf("rows remembered: got %d, want 6", rows)
	}

	next := testDay
	next.Date = next.Date.AddDate(0, 0, 1)
	read := func(parts []int) (got [][]byte, filters int) {
		t.Helper()
		err := db.MemoryBefore(ctx, "wechatpay", next, 7, func(bits int, filter []byte) ([]int, error) {
			filters++
			if bits != mem.Bits || !bytes.Equal(filter, mem.Filter) {
				t.Errorf("filter: got %d bits, % x; want %d, % x", bits, filter[:2], mem.Bits, mem.Filter[:2])
			}
			return parts, nil
		}, func(date time.Time, blob []byte) error {
			if date.Format(time.DateOnly) != "2026-11-28" {
				t.Errorf("memory dated %v, want 2026-11-28", date)
			}
			got = append(got, bytes.Clone(blob)) // the driver's bytes, valid until this returns
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, filters
	}
	if got, filters := read([]int{0, 3, 7}); filters != 1 || len(got) != 2 ||
		!bytes.Equal(got[0], mem.Parts[0].Records) || !bytes.Equal(got[1], mem.Parts[2].Records) {
		t.Errorf("parts 0, 3 and 7 (absent) chosen: %d filters read, got %d parts, want parts 0 and 3", filters, len(got))
	}
	if got, _ := read(nil); len(got) != 0 {
		t.Errorf("no part chosen: got %d parts, want none", len(got))
	}

	// A night remembered before filters existed: one part, read whole.
	if err := db.Exec(ctx, `DELETE FROM settled_filters WHERE run_id = 'run-mem'`); err != nil {
		t.Fatal(err)
	}
	if got, filters := read([]int{0}); filters != 0 || len(got) != 3 {
		t.Errorf("a night without a filter: %d filters read, %d parts; want 0 and every part (3)", filters, len(got))
	}

	empty := startRun(t, db, "run-empty")
	if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: result(empty), Memory: ledger.Memory{Bits: 0, Filter: make([]byte, 128)}}); err != nil {
		t.Fatalf("CompleteRun without rows: %v", err)
	}
	var parts, filters int
	if err := db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM settled_keys WHERE run_id = 'run-empty'),
	       (SELECT count(*) FROM settled_filters WHERE run_id = 'run-empty')`).Scan(&parts, &filters); err != nil {
		t.Fatal(err)
	}
	if parts != 0 || filters != 1 {
		t.Errorf("a night without rows: %d parts and %d filters, want 0 and 1", parts, filters)
	}
}
