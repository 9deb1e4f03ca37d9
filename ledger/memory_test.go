package ledger_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// TestMemoryParts: a night's memory written in parts comes back the next
// night part by part, in order, and a night without rows leaves an empty
// part rather than nothing.
func TestMemoryParts(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	parts := []ledger.MemoryPart{
		{Rows: 2, Records: bytes.Repeat([]byte{1}, 80)},
		{Rows: 1, Records: bytes.Repeat([]byte{2}, 40)},
		{Rows: 3, Records: bytes.Repeat([]byte{3}, 120)},
	}
	run := startRun(t, db, "run-mem")
	if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: result(run), Memory: parts}); err != nil {
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
	var got [][]byte
	var dates []time.Time
	if err := db.MemoryBefore(ctx, "wechatpay", next, 7, func(date time.Time, blob []byte) error {
		got, dates = append(got, blob), append(dates, date)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(parts) {
		t.Fatalf("MemoryBefore gave %d parts, want %d", len(got), len(parts))
	}
	for i := range parts {
		if !bytes.Equal(got[i], parts[i].Records) {
			t.Errorf("part %d: got % x…, want % x…", i, got[i][:1], parts[i].Records[:1])
		}
		if dates[i].Format(time.DateOnly) != "2026-11-28" {
			t.Errorf("part %d: date %v, want 2026-11-28", i, dates[i])
		}
	}

	empty := startRun(t, db, "run-empty")
	if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: result(empty)}); err != nil {
		t.Fatalf("CompleteRun without memory: %v", err)
	}
	var n int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM settled_keys WHERE run_id = 'run-empty' AND rows = 0 AND length(records) = 0`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("a night without rows: %d empty parts, want 1", n)
	}
}
