package rowstore

import (
	"time"
	"unsafe"

	"reconcile"
	"reconcile/matcher/internal/work"
	"reconcile/matcher/memory"
)

// Groups is how many keys the store holds rows of: groups 0 to
// Groups()-1.
func (s *Store) Groups() int {
	s.flush()
	return len(s.groups)
}

// Kind is the kind of group gi's rows.
func (s *Store) Kind(gi int32) reconcile.Kind { return kindOf(s.groups[gi].kind()) }

// Key is group gi's key, lent: valid while the store is not added to.
func (s *Store) Key(gi int32) string {
	b := s.arena.bytes(s.groupKey(&s.groups[gi]))
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Order is the order number group gi's first row names, lent: valid
// while the store is not added to.
func (s *Store) Order(gi int32) string {
	b := s.arena.bytes(s.rows[s.groups[gi].first].order())
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// HasLocal reports whether group gi has its local record.
func (s *Store) HasLocal(gi int32) bool { return s.groups[gi].local >= 0 }

// GroupSize is how many rows group gi has, read from the group alone.
func (s *Store) GroupSize(gi int32) int32 { return s.groups[gi].n() }

// Terms are a row's or a local record's numbers and outcome.
type Terms struct {
	Amount   int64
	Currency [3]byte
	At       int64 // when it settled, unix nanoseconds; 0 when it has not
}

// Glance is a group at a glance, read without building any value: how
// many rows it has, its first row, its local record, and whether the
// record's text is the first row's.
type Glance struct {
	Rows      int32
	HasLocal  bool
	Row       Terms
	RowStatus reconcile.TxnStatus
	Local     Terms
	// LocalStatus is the record's status word as stored (PAID, …).
	LocalStatus string
	// OtherOrder and OtherID say the record's order number, or its
	// channel id (not empty), is not its first row's.
	OtherOrder, OtherID bool
}

// Glance returns group gi at a glance.
func (s *Store) Glance(gi int32) Glance {
	g := &s.groups[gi]
	r := &s.rows[g.first]
	out := Glance{Rows: g.n(), Row: Terms{r.amount, s.rowCur(g.first), r.at}, RowStatus: statusCodes[r.status]}
	if g.local >= 0 {
		l := &s.locals[g.local]
		out.HasLocal = true
		out.Local = Terms{l.amount, s.localCur(g.local, l), l.at}
		out.LocalStatus = s.word(g.local, l, false)
		out.OtherOrder, out.OtherID = l.is(localOtherOrder), l.is(localOtherID)
	}
	return out
}

// Rows returns group gi's rows as values, in file order.
func (s *Store) Rows(gi int32) []reconcile.Transaction {
	g := &s.groups[gi]
	out := make([]reconcile.Transaction, 0, g.n())
	for ri := g.first; ri >= 0; ri = s.rows[ri].next {
		out = append(out, s.transaction(ri))
	}
	return out
}

// FirstRow returns the order and refund numbers of group gi's first row.
func (s *Store) FirstRow(gi int32) (order, refund string) {
	r := &s.rows[s.groups[gi].first]
	return s.arena.str(r.order()), s.arena.str(r.refund())
}

// Local returns group gi's local record, nil when it has none.
func (s *Store) Local(gi int32) *reconcile.LocalRecord {
	if li := s.groups[gi].local; li >= 0 {
		return s.local(li)
	}
	return nil
}

// GroupRows returns the rows of group gi, by index, for Row.
func (s *Store) GroupRows(gi int32, into []int32) []int32 {
	for ri := s.groups[gi].first; ri >= 0; ri = s.rows[ri].next {
		into = append(into, ri)
	}
	return into
}

// NextRow is the row after ri of its key, -1 after the last.
func (s *Store) NextRow(ri int32) int32 { return s.rows[ri].next }

// First is group gi's first row.
func (s *Store) First(gi int32) int32 { return s.groups[gi].first }

// RowCount is how many rows the store holds: rows 0 to RowCount()-1.
func (s *Store) RowCount() int {
	s.flush()
	return len(s.rows)
}

// RowTerms is a row's numbers, read without building any value.
type RowTerms struct {
	Kind     reconcile.Kind
	Status   reconcile.TxnStatus
	Amount   int64
	FeeMilli int64
	Currency [3]byte
}

// Row returns row ri's numbers.
func (s *Store) Row(ri int32) RowTerms {
	r := &s.rows[ri]
	return RowTerms{Kind: kindOf(r.kind), Status: statusCodes[r.status], Amount: r.amount, FeeMilli: r.fee, Currency: s.rowCur(ri)}
}

// Transaction returns row ri as a value.
func (s *Store) Transaction(ri int32) reconcile.Transaction { return s.transaction(ri) }

// LocalCount is how many local records the store holds: 0 to
// LocalCount()-1.
func (s *Store) LocalCount() int {
	s.flush()
	return len(s.locals)
}

// LocalTerms is a local record's numbers, read without building any value.
type LocalTerms struct {
	FirstRow    int32 // the first row of its key (NextRow walks the others)
	Kind        reconcile.Kind
	Status      string // its status word as stored
	Amount      int64
	Currency    [3]byte
	Customer    int64
	HasCustomer bool
	Created     int64 // the order's created_at, unix nanoseconds
	// RowSettled says a row of its key says the channel settled it.
	RowSettled bool
}

// LocalAt returns local record li's numbers.
func (s *Store) LocalAt(li int32) LocalTerms {
	l := &s.locals[li]
	return LocalTerms{FirstRow: l.row, Kind: kindOf(l.kind()), Status: s.word(li, l, false), Amount: l.amount, Currency: s.localCur(li, l),
		Customer: l.customer, HasCustomer: l.is(localCustomer), Created: l.created, RowSettled: l.is(localRowSettled)}
}

// LocalCreated is when local record li's order was created, unix
// nanoseconds (0 when it was not said): the one number of LocalAt that a
// walk over every record may need first.
func (s *Store) LocalCreated(li int32) int64 { return s.locals[li].created }

// LocalRecord returns local record li as a value.
func (s *Store) LocalRecord(li int32) *reconcile.LocalRecord { return s.local(li) }

// LocalKey is local record li's key (its first row's), lent: valid while
// the store is not added to.
func (s *Store) LocalKey(li int32) string {
	b := s.arena.bytes(s.rows[s.locals[li].row].key())
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Time is a time the store keeps in unix nanoseconds, in its zone.
func (s *Store) Time(ns int64) time.Time { return s.timeOf(ns) }

// UnixNano is a time as the store keeps it.
func UnixNano(t time.Time) int64 { return unixNano(t) }

// HashKeys hashes a batch of groups' keys as the nights' memory does,
// from as many goroutines as like: their
// rows and keys, each one a wait for main memory, are loaded together
// first, as lookups are. At ten million keys in 16 passes, hashing them
// one at a time had taken four times as long as hashing them all in
// order.
func (s *Store) HashKeys(gis []int32, hs []memory.KeyHash) {
	var sink byte
	for _, gi := range gis {
		sink += byte(s.rows[s.groups[gi].first].kind)
	}
	for _, gi := range gis {
		sink += s.arena.b[s.groupKey(&s.groups[gi]).off]
	}
	for i, gi := range gis {
		g := &s.groups[gi]
		hs[i] = memory.HashKey(kindOf(g.kind()), s.arena.bytes(s.groupKey(g)))
	}
	s.hashSink.Add(uint64(sink)) // keeps the warming loads; HashKeys runs on several goroutines
}

// Remember writes every row into w, the night's memory, from one range of
// rows per processor: hashing is most of the work, and each record is its
// own.
func (s *Store) Remember(w *memory.Writer) {
	s.flush()
	workers := work.For(len(s.rows))
	work.Parallel(workers, func(wk int) {
		lo, hi := work.Share(wk, workers, len(s.rows))
		for i := lo; i < hi; i++ {
			r := &s.rows[i]
			id := memory.HashID(s.arena.bytes(r.id()))
			if r.idN == 0 {
				id = memory.RowID(s.transaction(int32(i))) // rare: a row without a channel id
			}
			kind := kindOf(r.kind)
			w.Put(i, kind, memory.Record{Key: memory.HashKey(kind, s.arena.bytes(r.key())), ID: id,
				Amount: r.amount, Currency: s.rowCur(int32(i)), Status: statusCodes[r.status]})
		}
	})
}
