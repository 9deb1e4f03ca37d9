package ledger_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"reconcile"
	"reconcile/ledger"
	"reconcile/ledger/ledgertest"
)

// TestMemoryParts: a night's memory is kept as parts and a filter; the
// next night is given, in each of its passes, the range of the filter the
// pass asks for, and gets back exactly the parts it chooses, in order; a
// night remembered before filters is read whole, in every pass; a night
// without rows keeps its filter alone.
func TestMemoryParts(t *testing.T) {
	ctx := context.Background()
	db, _ := ledgertest.DB(t)
	mem := reconcile.NightMemory{
		Bits:   1,
		Filter: append(bytes.Repeat([]byte{0xA5}, 128), bytes.Repeat([]byte{0x5A}, 128)...),
		Parts: []reconcile.MemoryPart{
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
	read := func(r *passes) {
		t.Helper()
		if err := db.MemoryBefore(ctx, "wechatpay", next, 7, r); err != nil {
			t.Fatal(err)
		}
		for _, f := range r.filters {
			if want := mem.Filter[f.from:f.to]; f.bits != mem.Bits || !bytes.Equal(f.filter, want) {
				t.Errorf("pass %d: filter of %d bits, % x; want %d, % x", f.pass, f.bits, f.filter, mem.Bits, want)
			}
		}
		for _, b := range r.blobs {
			if b.date != "2026-11-28" {
				t.Errorf("memory dated %v, want 2026-11-28", b.date)
			}
		}
	}
	one := &passes{n: 1, choose: [][]int{{0, 3, 7}}}
	if read(one); len(one.filters) != 1 || len(one.blobs) != 2 ||
		!bytes.Equal(one.blobs[0].blob, mem.Parts[0].Records) || !bytes.Equal(one.blobs[1].blob, mem.Parts[2].Records) {
		t.Errorf("parts 0, 3 and 7 (absent) chosen: %d filters read, got %d parts, want parts 0 and 3", len(one.filters), len(one.blobs))
	}
	// In two passes, each is given its half of the filter, and its parts.
	two := &passes{n: 2, choose: [][]int{{1}, {3}}}
	if read(two); len(two.filters) != 2 || len(two.blobs) != 2 || two.blobs[0].pass != 0 || two.blobs[1].pass != 1 ||
		!bytes.Equal(two.blobs[0].blob, mem.Parts[1].Records) || !bytes.Equal(two.blobs[1].blob, mem.Parts[2].Records) {
		t.Errorf("two passes choosing parts 1, then 3: %d filters read, %d parts %v; want 2 and parts 1, 3", len(two.filters), len(two.blobs), two.blobs)
	}
	none := &passes{n: 1}
	if read(none); len(none.blobs) != 0 {
		t.Errorf("no part chosen: got %d parts, want none", len(none.blobs))
	}

	// A night remembered before filters existed: read whole, in each pass.
	if err := db.Exec(ctx, `DELETE FROM settled_filters WHERE run_id = 'run-mem'`); err != nil {
		t.Fatal(err)
	}
	old := &passes{n: 2, choose: [][]int{{0}, {0}}}
	if read(old); len(old.filters) != 0 || len(old.blobs) != 6 {
		t.Errorf("a night without a filter in two passes: %d filters read, %d parts; want 0 and every part twice (6)", len(old.filters), len(old.blobs))
	}

	empty := startRun(t, db, "run-empty")
	if _, err := db.CompleteRun(ctx, ledger.Outcome{Result: result(empty), Memory: reconcile.NightMemory{Bits: 0, Filter: make([]byte, 128)}}); err != nil {
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

// passes is a ledger.Rememberer that reads in n passes, the filter cut in
// n equal ranges, choosing choose[p] in pass p, and records what it is
// given.
type passes struct {
	n       int
	choose  [][]int
	pass    int
	filters []givenFilter
	blobs   []givenBlob
}

type givenFilter struct {
	pass, bits, from, to int
	filter               []byte
}

type givenBlob struct {
	pass int
	date string
	blob []byte
}

func (r *passes) Passes() int { return r.n }
func (r *passes) Pass(p int)  { r.pass = p }

func (r *passes) FilterRange(bits int) (from, to int) {
	size := 128 << bits / r.n
	return r.pass * size, (r.pass + 1) * size
}

func (r *passes) Parts(bits int, filter []byte) ([]int, error) {
	from, to := r.FilterRange(bits)
	r.filters = append(r.filters, givenFilter{r.pass, bits, from, to, bytes.Clone(filter)}) // the driver's bytes
	if r.pass < len(r.choose) {
		return r.choose[r.pass], nil
	}
	return nil, nil
}

func (r *passes) Add(date time.Time, blob []byte) error {
	r.blobs = append(r.blobs, givenBlob{r.pass, date.Format(time.DateOnly), bytes.Clone(blob)})
	return nil
}
