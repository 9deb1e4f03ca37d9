package channelfeed

import "unsafe"

// slabSize is the size of one slab of row text (see textSlabs).
const slabSize = 64 << 10

// textSlabs keeps the text of the rows a parser reads in slabs that are
// filled again once the rows in them are done with, instead of a string
// per row, which at ten million rows made a gigabyte of garbage for the
// collector and let the heap grow by as much between collections.
//
// Only ParseFileAside uses it, and only where it knows when a row is done
// with: it cuts the slabs at the end of each batch of rows it hands on,
// and gives them back here once add has been called with every row of
// that batch. A parser that keeps a row's string beyond the row (a header,
// the last currency seen) copies it. Every method is called from the
// parsing goroutine; a nil *textSlabs makes plain strings.
type textSlabs struct {
	cur  []byte   // the slab being filled
	used [][]byte // slabs filled since the last cut, cur among them
	free [][]byte // slabs given back, to fill again
}

// str returns b as a string kept in the current slab. A line longer than
// a slab gets a string of its own.
func (t *textSlabs) str(b []byte) string {
	if t == nil || len(b) > slabSize {
		return string(b)
	}
	if len(b) == 0 {
		return ""
	}
	if cap(t.cur)-len(t.cur) < len(b) {
		t.next()
	}
	off := len(t.cur)
	t.cur = append(t.cur, b...)
	// The slab's bytes from off on are written once, here, and not again
	// until the rows that hold them are done with (give).
	return unsafe.String(&t.cur[off], len(b))
}

func (t *textSlabs) next() {
	if n := len(t.free); n > 0 {
		t.cur, t.free = t.free[n-1][:0], t.free[:n-1]
	} else {
		t.cur = make([]byte, 0, slabSize)
	}
	t.used = append(t.used, t.cur)
}

// cut returns the slabs holding the rows since the last cut; the rows
// after it start a slab of their own.
func (t *textSlabs) cut() [][]byte {
	if t == nil {
		return nil
	}
	used := t.used
	t.used, t.cur = nil, nil
	return used
}

// give takes back slabs cut before, whose rows are done with.
func (t *textSlabs) give(slabs [][]byte) {
	if t != nil {
		t.free = append(t.free, slabs...)
	}
}
