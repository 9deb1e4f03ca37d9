package matcher

import "reconcile"

// Rows and local records are looked up in the hash table in batches. A
// probe of a table of hundreds of megabytes nearly always waits for main
// memory; one row at a time, each waits alone. A batch first loads the
// slots of all its keys, loads that do not depend on each other and so
// overlap, then does the lookups in order, which find their slots in the
// cache. The outcome is exactly that of one at a time: rows are linked,
// and local records attached, in the order they came.

const batchSize = 16

// pendingRow is a row indexed but not yet linked into its key's group.
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
func (m *Matcher) slot(h uint64) uint64 {
	n := len(m.tab.slots)
	if n == 0 {
		return 0
	}
	return m.tab.slots[h&uint64(n-1)]
}

// flush finishes every pending lookup. Everything that reads the groups
// calls it first.
func (m *Matcher) flush() {
	m.flushRows()
	m.flushLocals()
}

func (m *Matcher) flushRows() {
	b := m.batch.rows
	if len(b) == 0 {
		return
	}
	var sum uint64
	for _, p := range b {
		sum += m.slot(p.h)
	}
	m.batch.sink = sum
	for _, p := range b {
		m.link(p.ri, p.h)
	}
	m.batch.rows = b[:0]
}

// link adds row ri, whose key hashes to h, to its key's group.
func (m *Matcher) link(ri int32, h uint64) {
	r := &m.rows[ri]
	gi := m.lookupSpan(r.kind, r.key(), h)
	if gi < 0 {
		m.insert(ri, h)
		return
	}
	g := &m.groups[gi]
	m.rows[g.last].next = ri
	g.last = ri
	g.kn++ // one more row
}

// queueLocal puts r in the batch, its text copied when copyText says the
// caller reuses it (the driver's buffers) before the batch is flushed.
func (m *Matcher) queueLocal(r *reconcile.LocalRow, copyText bool) {
	m.flushRows()
	c := *r
	if copyText {
		c, m.batch.text = r.CopyText(m.batch.text)
	}
	kind := codeOfKind(c.Kind)
	key := c.OrderNo
	if kind == refundCode {
		key = c.RefundNo
	}
	m.batch.locals = append(m.batch.locals, pendingLocal{rec: c, h: m.tab.hash(kind, key)})
	if len(m.batch.locals) == batchSize {
		m.flushLocals()
	}
}

func (m *Matcher) flushLocals() {
	b := m.batch.locals
	if len(b) == 0 {
		return
	}
	// Rows indexed since (ResolveRefunds indexes some while records wait)
	// are linked first: a record meets every row added before it.
	m.flushRows()
	var sum uint64
	for i := range b {
		sum += m.slot(b[i].h)
	}
	if m.pairs.words != nil { // rule 10's counter of each order, likewise
		for i := range b {
			r := &b[i].rec
			sum += m.pairs.word(r.Customer, r.Amount, curOfBytes(r.Currency))
		}
	}
	m.batch.sink = sum
	for i := range b {
		switch {
		case m.attach(&b[i].rec, b[i].h):
		case m.interleaved && isKeyed(b[i].rec.Kind):
			// Its rows may be still to come: it is counted when it meets
			// them, or none (RowsDone).
			m.early = append(m.early, b[i].rec.Record())
			m.localRows--
		default:
			m.keepUnseen(b[i].rec.Record())
		}
		b[i] = pendingLocal{}
	}
	m.batch.locals = b[:0]
	m.batch.text = m.batch.text[:0]
}
