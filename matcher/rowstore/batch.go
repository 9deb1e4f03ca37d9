package rowstore

import "reconcile"

// Rows and local records are looked up in the hash table in batches. A
// probe of a table of hundreds of megabytes nearly always waits for main
// memory; one row at a time, each waits alone. A batch first loads the
// slots of all its keys, loads that do not depend on each other and so
// overlap, then does the lookups in order, which find their slots in the
// cache. The outcome is exactly that of one at a time: rows are linked,
// and local records attached, in the order they came.

// batchSize is how many lookups wait to be done together; it is also the
// batch of other loops over the store's arrays that load first and work
// after (Tonight's hashing, a caller's counters).
const batchSize = 16

// BatchSize is batchSize, for a caller's own loads ahead of its work.
const BatchSize = batchSize

// pendingRow is a row kept but not yet linked into its key's group.
type pendingRow struct {
	ri int32
	h  uint64
}

// pendingLocal is a local record waiting for its lookup, its text copied
// out of the driver's buffers into the batch's own.
type pendingLocal struct {
	rec reconcile.LocalRow
	h   uint64
}

type batch struct {
	rows   []pendingRow
	locals []pendingLocal
	text   []byte
	sink   uint64 // keeps the warming loads from being optimised away
}

// slot returns the table slot a hash starts probing at; the warming loops
// load it for what the load brings into the cache.
func (s *Store) slot(h uint64) uint64 {
	n := len(s.tab.slots)
	if n == 0 {
		return 0
	}
	return s.tab.slots[h&uint64(n-1)]
}

// Keep keeps a value computed from warming loads, so they are not
// optimised away; from any goroutine.
func (s *Store) Keep(v uint64) { s.hashSink.Add(v) }

// flush finishes every pending lookup. Everything that reads the groups
// calls it first.
func (s *Store) flush() {
	s.flushRows()
	s.flushLocals()
}

// Flush finishes every pending lookup: rows are linked to their groups,
// local records attached (or told unmatched).
func (s *Store) Flush() { s.flush() }

func (s *Store) flushRows() {
	b := s.batch.rows
	if len(b) == 0 {
		return
	}
	var sum uint64
	for _, p := range b {
		sum += s.slot(p.h)
	}
	s.batch.sink = sum
	for _, p := range b {
		s.link(p.ri, p.h)
	}
	s.batch.rows = b[:0]
}

// link adds row ri, whose key hashes to h, to its key's group.
func (s *Store) link(ri int32, h uint64) {
	r := &s.rows[ri]
	gi := s.lookupHashedBytes(r.kind, s.arena.bytes(r.key()), h)
	if gi < 0 {
		s.insert(ri, h)
		return
	}
	g := &s.groups[gi]
	s.rows[g.last].next = ri
	g.last = ri
	g.kn++ // one more row
	if g.local >= 0 && statusCodes[r.status] == reconcile.StatusSuccess {
		s.locals[g.local].set(localRowSettled, true) // a row after its record
	}
}

// Attach puts local record r in the batch, its text copied when copyText
// says the caller reuses it (the driver's buffers) before the batch is
// flushed. When the batch is flushed, the record becomes the local record
// of its key's group, if the key has rows and no record yet; if it has no
// rows, the store's unmatched is told. A record meets every row added
// before it.
func (s *Store) Attach(r *reconcile.LocalRow, copyText bool) {
	s.flushRows()
	c := *r
	if copyText {
		c, s.batch.text = r.CopyText(s.batch.text)
	}
	kind := codeOfKind(c.Kind)
	key := c.OrderNo
	if kind == refundCode {
		key = c.RefundNo
	}
	s.batch.locals = append(s.batch.locals, pendingLocal{rec: c, h: s.tab.hash(kind, key)})
	if len(s.batch.locals) == batchSize {
		s.flushLocals()
	}
}

func (s *Store) flushLocals() {
	b := s.batch.locals
	if len(b) == 0 {
		return
	}
	// Rows added since are linked first: a record meets every row added
	// before it.
	s.flushRows()
	var sum uint64
	for i := range b {
		sum += s.slot(b[i].h)
	}
	s.batch.sink = sum
	for i := range b {
		if !s.attach(&b[i].rec, b[i].h) && s.unmatched != nil {
			s.unmatched(&b[i].rec)
		}
		b[i] = pendingLocal{}
	}
	s.batch.locals = b[:0]
	s.batch.text = s.batch.text[:0]
}
