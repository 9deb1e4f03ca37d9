// Package rowstore holds one side of a run, the file's rows (millions of
// them), and the local records of their keys, in a form the garbage
// collector need not look into: every string is a span of one byte
// arena, and rows, key groups, local records and the hash table are
// slices of plain values linked by index, large ones outside the heap
// (matcher/internal/offheap). A row costs its bytes and about 85 more,
// and no pointers.
//
// It holds no rule. It hands out what it holds as plain values: a key
// group's first row and local record at a glance (Glance), a group's rows
// as reconcile.Transactions and its local record as a
// reconcile.LocalRecord, a row or a local record's numbers (Row,
// LocalAt). This file's types are the only code that knows a row is 48
// bytes.
//
// Rows and local records are looked up in batches (batch.go). Feed a
// store from one goroutine; once nothing more is added (and Flush has
// run), its views may be read from several.
package rowstore

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"reconcile"
	"reconcile/matcher/internal/offheap"
)

// span is a string kept in the arena.
type span struct{ off, n uint32 }

type arena struct{ b []byte }

func (a *arena) add(s string) span {
	off := len(a.b)
	a.b = append(a.b, s...)
	return span{uint32(off), uint32(len(s))}
}

func (a *arena) addBytes(b []byte) span {
	off := len(a.b)
	a.b = append(a.b, b...)
	return span{uint32(off), uint32(len(b))}
}

func (a *arena) bytes(s span) []byte { return a.b[s.off : s.off+s.n] }
func (a *arena) str(s span) string   { return string(a.bytes(s)) }

// A row's kind is kept as a small code, its index in kindCodes; statuses
// are codes too, indexes into statusCodes.
const (
	paymentCode uint8 = iota
	refundCode
)

var kindCodes = []reconcile.Kind{paymentCode: reconcile.KindPayment, refundCode: reconcile.KindRefund}

var statusCodes = []reconcile.TxnStatus{reconcile.StatusSuccess, reconcile.StatusProcessing, reconcile.StatusFailed}

func kindOf(code uint8) reconcile.Kind { return kindCodes[code] }

// codeOfKind is the code of a payment or a refund; callers keep other
// kinds out of the store.
func codeOfKind(k reconcile.Kind) uint8 {
	if k == reconcile.KindRefund {
		return refundCode
	}
	return paymentCode
}

// statusCode is the code of a row's status; one the store does not know
// is kept as success, as the memory of a night keeps it.
func statusCode(s reconcile.TxnStatus) uint8 {
	for i, x := range statusCodes {
		if x == s {
			return uint8(i)
		}
	}
	return 0
}

// Keyed reports whether rows of the kind are kept by key: payments and
// refunds.
func Keyed(k reconcile.Kind) bool { return k == reconcile.KindPayment || k == reconcile.KindRefund }

// row is one payment or refund row of the file: 48 bytes.
type row struct {
	amount, fee int64
	at          int64 // unix nanoseconds
	// text is where the row's order number, refund number and channel id
	// begin in the arena, one after another; orderN, refundN and idN are
	// their lengths (see the span methods), each at most
	// reconcile.MaxKeyBytes.
	text                 uint32
	line                 int32
	next                 int32 // the next row of the same key, or -1
	orderN, refundN, idN uint16
	feeRate              uint16 // the file's own rate (rateCode); 0 when none
	cur                  uint8  // the currency's code (Store.rowCur)
	kind, status         uint8
	rawKind              uint8 // the file's word for its kind (Store.rawKind)
}

func (r *row) order() span { return span{r.text, uint32(r.orderN)} }
func (r *row) refund() span {
	return span{r.text + uint32(r.orderN), uint32(r.refundN)}
}
func (r *row) id() span {
	return span{r.text + uint32(r.orderN) + uint32(r.refundN), uint32(r.idN)}
}

// key is the span of the row's key: its order number or refund number.
func (r *row) key() span {
	if r.kind == refundCode {
		return r.refund()
	}
	return r.order()
}

// localRow is the local record of a key of the file.
//
// Its text is nearly always the text of the first row of its key, which
// it points at; where the channel id is empty a flag says so, and where
// any of it differs otherwise, the store's localText holds it, and a flag
// says which.
// It is 40 bytes.
type localRow struct {
	amount       int64
	at           int64 // settled at, unix nanoseconds; 0 when not settled
	customer     int64 // orders.user_id, when localCustomer
	created      int64 // the order's created_at, unix nanoseconds
	row          int32 // the first row of its key
	status, idem uint8 // codes of words (Store.word)
	cur          uint8 // code of its currency (Store.localCur)
	flags        localFlags
}

type localFlags uint8

const (
	localRefund     localFlags = 1 << iota // a refund's record, not an order's
	localNoID                              // its channel id is empty
	localCustomer                          // it has a customer
	localOtherOrder                        // its order number is not its first row's
	localOtherID                           // its channel id is not its first row's (nor empty)
	localRowSettled                        // a row of its key says the channel settled it
)

func (l *localRow) is(f localFlags) bool { return l.flags&f != 0 }

func (l *localRow) set(f localFlags, on bool) {
	if on {
		l.flags |= f
	} else {
		l.flags &^= f
	}
}

func (l *localRow) kind() uint8 {
	if l.is(localRefund) {
		return refundCode
	}
	return paymentCode
}

// localText is the text of a local record that differs from its row's.
type localText struct{ order, refund, id span }

// keyGroup is every row of the file with one key.
//
// Its key is the key of its first row, which every group has: 16 bytes a
// group, where a span of its own made it 24.
type keyGroup struct {
	first, last int32  // rows
	local       int32  // the local record, or -1
	kn          uint32 // its kind in the top bit, its number of rows below
}

func (g *keyGroup) kind() uint8 { return uint8(g.kn >> 31) }
func (g *keyGroup) n() int32    { return int32(g.kn &^ (1 << 31)) }

// Store holds a run's rows by key and the local records of their keys.
type Store struct {
	loc        *time.Location
	arena      arena
	rows       []row
	groups     []keyGroup
	tab        table
	locals     []localRow
	localText  map[int32]localText // of the locals whose text is not their row's
	words      []string            // local and idempotency statuses, coded (wordCode)
	ownWords   map[int64]string    // the words past them, by record (ownWordKey)
	curs       [][3]byte           // currencies, coded (curCode)
	lastCur    uint8               // the code curCode gave last
	ownCurs    map[int32][3]byte   // the currencies past them, by record
	ownRowCurs map[int32][3]byte   // and by row
	rawKinds   []span              // the rows' own words for their kinds, shared (rawKind)
	rates      map[string]uint16   // the files' own fee rates, by their code in the row
	rateWords  []string
	batch      batch         // lookups waiting to be done together
	hashSink   atomic.Uint64 // keeps the warming loads of HashKeys and Keep
	big        *offheap.Mappings
	// unmatched is told of each local record that found no row of its
	// key (Attach).
	unmatched func(*reconcile.LocalRow)
}

// New returns a store whose times are shown in loc, sized for about
// expectRows rows when that is known (0: grown as rows come), its large
// arrays in big. unmatched is told of each local record that finds no
// row of its key, while its text is still lent.
func New(loc *time.Location, expectRows int, big *offheap.Mappings, unmatched func(*reconcile.LocalRow)) *Store {
	if loc == nil {
		loc = time.UTC
	}
	s := &Store{loc: loc, tab: table{seed: maphash.MakeSeed()}, big: big, unmatched: unmatched}
	if n := expectRows; n > 0 {
		// Sized once for about that many rows, instead of growing by
		// doubling: less copying, and no memory reserved for rows that
		// never come.
		s.rows = offheap.Slice[row](big, n, false, false)
		s.groups = offheap.Slice[keyGroup](big, n, false, false)
		s.locals = offheap.Slice[localRow](big, n, false, false)
		s.arena.b = offheap.Slice[byte](big, n*56, false, false) // order number, channel id, some refund numbers
		slots := 1024
		for 2*slots < 3*n { // at most two thirds full
			slots *= 2
		}
		s.tab.slots = offheap.Slice[uint64](big, slots, true, true)
		if big.Mapped() > 0 {
			// A store dropped without Release (a run that failed) returns
			// its arrays when it is collected.
			runtime.AddCleanup(s, func(ms *offheap.Mappings) { ms.Release() }, big)
		}
	}
	return s
}

// Add keeps a payment or refund row under its key, its text copied; with
// rate, the file's own word for its fee rate too. A row whose text is
// past reconcile.MaxKeyBytes is a caller's bug (the parsers and the
// ledger refuse it).
func (s *Store) Add(tx reconcile.Transaction, rate bool) {
	kind := codeOfKind(tx.Kind)
	if why := reconcile.KeyFault(&tx); why != "" {
		panic(fmt.Sprintf("rowstore: row of line %d: %s", tx.Line, why))
	}
	s.flushLocals()
	ri := int32(len(s.rows))
	r := row{
		text:   s.arena.add(tx.OrderNo).off,
		orderN: uint16(len(tx.OrderNo)), refundN: uint16(len(tx.RefundNo)), idN: uint16(len(tx.ChannelTxnID)),
		amount: tx.Amount, fee: tx.FeeMilli, at: unixNano(tx.OccurredAt), line: int32(tx.Line),
		next: -1, kind: kind, status: statusCode(tx.Status),
	}
	s.setRowCur(ri, &r, curOf(tx.Currency))
	s.arena.add(tx.RefundNo)
	s.arena.add(tx.ChannelTxnID)
	r.rawKind = s.addRawKind(tx.RawKind) // after the row's text, which its own word follows
	if rate && tx.FeeRate != "" {
		r.feeRate = s.rateCode(tx.FeeRate) // shown beside the contract's rate
	}
	s.rows = append(s.rows, r)
	s.batch.rows = append(s.batch.rows, pendingRow{ri, s.tab.hashString(kind, tx.Key())})
	if len(s.batch.rows) == batchSize {
		s.flushRows()
	}
}

// table finds a group by kind and key: open addressing over slots that
// hold a group index (i+1; 0 is empty) in the low half and the top of the
// key's hash in the high half, so a probe that meets another key is
// nearly always told apart without reading the group or its key.
type table struct {
	slots []uint64
	seed  maphash.Seed
}

func slotOf(gi int32, h uint64) uint64 { return h&^0xFFFFFFFF | uint64(uint32(gi+1)) }

func (t *table) hash(kind uint8, key []byte) uint64 {
	return maphash.Bytes(t.seed, key) ^ (uint64(kind) * 0x9E3779B97F4A7C15)
}

func (t *table) hashString(kind uint8, key string) uint64 {
	return maphash.String(t.seed, key) ^ (uint64(kind) * 0x9E3779B97F4A7C15)
}

// Find returns the group of kind and key, or -1.
func (s *Store) Find(kind reconcile.Kind, key string) int32 {
	s.flush()
	return s.find(codeOfKind(kind), key)
}

func (s *Store) find(kind uint8, key string) int32 {
	// The bytes of key are only read.
	b := unsafe.Slice(unsafe.StringData(key), len(key))
	return s.lookupHashedBytes(kind, b, s.tab.hash(kind, b))
}

// HashOrder is an order number's hash, the store's own 64 bits: for a set
// of orders to be asked about by hash.
func (s *Store) HashOrder(order string) uint64 { return s.tab.hashString(paymentCode, order) }

func (s *Store) lookupHashedBytes(kind uint8, key []byte, h uint64) int32 {
	if len(s.tab.slots) == 0 {
		return -1
	}
	mask := uint64(len(s.tab.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := s.tab.slots[i]
		if sl == 0 {
			return -1
		}
		if sl>>32 != h>>32 {
			continue
		}
		gi := int32(uint32(sl)) - 1
		g := &s.groups[gi]
		if g.kind() == kind && string(s.arena.bytes(s.groupKey(g))) == string(key) {
			return gi
		}
	}
}

// groupKey is the span of the group's key.
func (s *Store) groupKey(g *keyGroup) span { return s.rows[g.first].key() }

// insert adds a group of one row, ri, whose key (hashing to h) has none.
func (s *Store) insert(ri int32, h uint64) {
	gi := int32(len(s.groups))
	s.groups = append(s.groups, keyGroup{first: ri, last: ri, local: -1, kn: uint32(s.rows[ri].kind)<<31 | 1})
	if 3*(len(s.groups)+1) > 2*len(s.tab.slots) {
		s.grow() // places every group, the new one too
		return
	}
	s.placeHashed(gi, h)
}

func (s *Store) place(gi int32) {
	g := &s.groups[gi]
	s.placeHashed(gi, s.tab.hash(g.kind(), s.arena.bytes(s.groupKey(g))))
}

func (s *Store) placeHashed(gi int32, h uint64) {
	mask := uint64(len(s.tab.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		if s.tab.slots[i] == 0 {
			s.tab.slots[i] = slotOf(gi, h)
			return
		}
	}
}

func (s *Store) grow() {
	n := 1024
	for n < 2*len(s.tab.slots) || n < 3*(len(s.groups)+1) {
		n *= 2
	}
	s.tab.slots = make([]uint64, n)
	for gi := range s.groups {
		s.place(int32(gi))
	}
}

// attach makes local record r, whose key hashes to h, the local record of
// its key's group, and reports whether the key has rows. Its text is kept
// only where it differs from the first row's: the key is the same by
// definition, and the channel id and order number nearly always are.
func (s *Store) attach(r *reconcile.LocalRow, h uint64) bool {
	if !Keyed(r.Kind) {
		return false
	}
	kind := codeOfKind(r.Kind)
	key := r.OrderNo
	if kind == refundCode {
		key = r.RefundNo
	}
	gi := s.lookupHashedBytes(kind, key, h)
	if gi < 0 {
		return false
	}
	g := &s.groups[gi]
	if g.local >= 0 {
		return true
	}
	first := &s.rows[g.first]
	li := int32(len(s.locals))
	l := localRow{amount: r.Amount, at: unixNano(r.SettledAt), row: g.first, customer: r.Customer, created: unixNano(r.CreatedAt)}
	l.set(localRefund, kind == refundCode)
	l.set(localNoID, len(r.ChannelTxnID) == 0)
	l.set(localCustomer, r.HasCustomer)
	s.setCur(li, &l, curOfBytes(r.Currency))
	s.setWord(li, &l, false, r.Status)
	s.setWord(li, &l, true, r.IdemStatus)
	sameOrder := string(s.arena.bytes(first.order())) == string(r.OrderNo)
	sameRefund := string(s.arena.bytes(first.refund())) == string(r.RefundNo)
	sameID := l.is(localNoID) || string(s.arena.bytes(first.id())) == string(r.ChannelTxnID)
	l.set(localOtherOrder, !sameOrder)
	l.set(localOtherID, !sameID)
	for ri := g.first; ri >= 0 && !l.is(localRowSettled); ri = s.rows[ri].next {
		l.set(localRowSettled, statusCodes[s.rows[ri].status] == reconcile.StatusSuccess)
	}
	if !sameOrder || !sameRefund || !sameID {
		t := localText{first.order(), first.refund(), first.id()}
		if !sameOrder {
			t.order = s.arena.addBytes(r.OrderNo)
		}
		if !sameRefund {
			t.refund = s.arena.addBytes(r.RefundNo)
		}
		if !sameID {
			t.id = s.arena.addBytes(r.ChannelTxnID)
		} else if l.is(localNoID) {
			t.id = span{}
		}
		if s.localText == nil {
			s.localText = map[int32]localText{}
		}
		s.localText[li] = t
	}
	g.local = li
	s.locals = append(s.locals, l)
	return true
}

// SetIdem records the idempotency status of the local record of group gi.
func (s *Store) SetIdem(gi int32, status string) {
	s.flush()
	if li := s.groups[gi].local; li >= 0 {
		s.setWord(li, &s.locals[li], true, []byte(status))
	}
}

// Release lets go of the key groups, the local records and the hash
// table: what is left is the rows, for the night's memory (Rows, Row,
// RowKey, RowID). Close lets go of the rest.
func (s *Store) Release() {
	s.flush()
	groups, locals, slots := s.groups, s.locals, s.tab.slots
	s.groups, s.locals, s.tab.slots, s.localText = nil, nil, nil, nil
	offheap.Free(s.big, groups)
	offheap.Free(s.big, locals)
	offheap.Free(s.big, slots)
}

// DropIndex lets go of the hash table, the largest array the store keeps
// for finding groups by key, once nothing more is looked up: the groups
// are still walked and read, but Find finds none, and nothing can be
// added.
func (s *Store) DropIndex() {
	s.flush()
	slots := s.tab.slots
	s.tab.slots = nil
	offheap.Free(s.big, slots)
}

// Close lets go of everything; the store cannot be used again.
func (s *Store) Close() {
	s.Release()
	s.rows, s.arena.b = nil, nil
}

// unixNano keeps a time as nanoseconds, the zero time as 0.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func (s *Store) timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).In(s.loc)
}
