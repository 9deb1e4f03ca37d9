package matcher

import (
	"encoding/binary"
	"hash/maphash"
	"strings"
	"time"
	"unsafe"

	"reconcile"
)

// The index holds one side of a run — the file's rows, millions of them —
// in a form the garbage collector need not look into: every string is a
// span of one byte arena, and rows, groups and the hash table are slices of
// plain values linked by index. A row costs its bytes and about 85 more,
// and no pointers; findings are built as ordinary values only for the keys
// that need them.

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

// A row's kind is kept as a small code, its index in kindCodes: the one
// encoding of a kind in the index, the hash table and the memory (which
// stores it one up, see appendRecord). Statuses are codes too, indexes
// into statusCodes.
const (
	paymentCode uint8 = iota
	refundCode
)

var kindCodes = []reconcile.Kind{paymentCode: reconcile.KindPayment, refundCode: reconcile.KindRefund}

func kindOf(code uint8) reconcile.Kind { return kindCodes[code] }

// isKeyed reports whether rows of the kind are indexed by key: payments
// and refunds.
func isKeyed(k reconcile.Kind) bool { return k == reconcile.KindPayment || k == reconcile.KindRefund }

// codeOfKind is the code of a payment or a refund; callers keep other
// kinds out of the index.
func codeOfKind(k reconcile.Kind) uint8 {
	if k == reconcile.KindRefund {
		return refundCode
	}
	return paymentCode
}

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
	cur                  uint8  // the currency's code (Matcher.rowCur)
	kind, status         uint8
	rawKind              uint8 // the file's word for its kind (Matcher.rawKind)
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
// any of it differs otherwise, the matcher's localText holds it.
// It is 40 bytes.
type localRow struct {
	amount       int64
	at           int64 // settled at, unix nanoseconds; 0 when not settled
	customer     int64 // orders.user_id, when localCustomer
	created      int64 // the order's created_at, unix nanoseconds
	row          int32 // the first row of its key
	status, idem uint8 // codes of words (Matcher.word)
	cur          uint8 // code of its currency (Matcher.localCur)
	flags        localFlags
}

type localFlags uint8

const (
	localRefund     localFlags = 1 << iota // a refund's record, not an order's
	localNoID                              // its channel id is empty
	localCustomer                          // it has a customer
	localPairable                          // an order rule 10 looks at (Matcher.pairable)
	localOtherOrder                        // a refund's record of another order than its first row names
	localOtherID                           // an order's record of another channel id than its first row's
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

func (m *Matcher) lookup(kind uint8, key string) int32 {
	// The bytes of key are only read.
	b := unsafe.Slice(unsafe.StringData(key), len(key))
	return m.lookupHashedBytes(kind, b, m.tab.hash(kind, b))
}

func (m *Matcher) lookupHashedBytes(kind uint8, key []byte, h uint64) int32 {
	if len(m.tab.slots) == 0 {
		return -1
	}
	mask := uint64(len(m.tab.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := m.tab.slots[i]
		if s == 0 {
			return -1
		}
		if s>>32 != h>>32 {
			continue
		}
		gi := int32(uint32(s)) - 1
		g := &m.groups[gi]
		if g.kind() == kind && string(m.arena.bytes(m.groupKey(g))) == string(key) {
			return gi
		}
	}
}

// lookupSpan looks up a key kept in the arena.
func (m *Matcher) lookupSpan(kind uint8, key span, h uint64) int32 {
	return m.lookupHashedBytes(kind, m.arena.bytes(key), h)
}

// groupKey is the span of the group's key.
func (m *Matcher) groupKey(g *keyGroup) span { return m.rows[g.first].key() }

// insert adds a group of one row, ri, whose key (hashing to h) has none.
func (m *Matcher) insert(ri int32, h uint64) {
	gi := int32(len(m.groups))
	m.groups = append(m.groups, keyGroup{first: ri, last: ri, local: -1, kn: uint32(m.rows[ri].kind)<<31 | 1})
	if 3*(len(m.groups)+1) > 2*len(m.tab.slots) {
		m.grow() // places every group, the new one too
		return
	}
	m.placeHashed(gi, h)
}

func (m *Matcher) place(gi int32) {
	g := &m.groups[gi]
	m.placeHashed(gi, m.tab.hash(g.kind(), m.arena.bytes(m.groupKey(g))))
}

func (m *Matcher) placeHashed(gi int32, h uint64) {
	mask := uint64(len(m.tab.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		if m.tab.slots[i] == 0 {
			m.tab.slots[i] = slotOf(gi, h)
			return
		}
	}
}

func (m *Matcher) grow() {
	n := 1024
	for n < 2*len(m.tab.slots) || n < 3*(len(m.groups)+1) {
		n *= 2
	}
	m.tab.slots = make([]uint64, n)
	for gi := range m.groups {
		m.place(int32(gi))
	}
}

// A row's own word for its kind is a code. A file names a few (payment
// and refund, SUCCESS and REFUND): the first maxRawKinds are kept once, in
// rawKinds, and coded by their place there, one up (0 is no word). Any
// after them, which only a strange file has, follow the row's channel id
// in the arena, their length before them as a uvarint, coded ownCode:
// such a row costs its word's bytes, as its other text does.
const maxRawKinds = 8

// ownCode is the code of a value kept beside its row or under its record,
// past the values a run codes: a row's word for its kind, a local
// record's status or currency.
const ownCode uint8 = 0xFF

// addRawKind codes the word of the row whose text was just added.
func (m *Matcher) addRawKind(w string) uint8 {
	if w == "" {
		return 0
	}
	for i, k := range m.rawKinds {
		if string(m.arena.bytes(k)) == w {
			return uint8(i + 1)
		}
	}
	if len(m.rawKinds) < maxRawKinds {
		m.rawKinds = append(m.rawKinds, m.arena.add(w))
		return uint8(len(m.rawKinds))
	}
	m.arena.b = binary.AppendUvarint(m.arena.b, uint64(len(w)))
	m.arena.b = append(m.arena.b, w...)
	return ownCode
}

// rawKind is the row's own word for its kind.
func (m *Matcher) rawKind(r *row) string {
	switch r.rawKind {
	case 0:
		return ""
	case ownCode:
		end := r.id()
		b := m.arena.b[end.off+end.n:]
		n, w := binary.Uvarint(b)
		return string(b[w : w+int(n)])
	}
	return m.arena.str(m.rawKinds[r.rawKind-1])
}

// A local record's status and idempotency status are codes of the words
// a run has seen (m.words), of which local tables have a handful. Past
// maxWords, a record's word is its own, kept under the record in
// m.ownWords: a table that writes a status of its own on every record (a
// view gone wrong, or a hostile one) costs a map entry per record, never
// a search through every word seen, nor another record's word.
const maxWords = 32

// A currency is a code too, of m.curs, a row's as a local record's; a
// run of more than maxCurs currencies keeps the rest under the row or
// record, in m.ownRowCurs and m.ownCurs. Rows come in runs of one
// currency: the code of the last is tried first.
const maxCurs = 254

// curCode is the code of cur, or ownCode.
func (m *Matcher) curCode(cur [3]byte) uint8 {
	if int(m.lastCur) < len(m.curs) && m.curs[m.lastCur] == cur {
		return m.lastCur
	}
	for i, c := range m.curs {
		if c == cur {
			m.lastCur = uint8(i)
			return m.lastCur
		}
	}
	if len(m.curs) == maxCurs {
		return ownCode
	}
	m.curs = append(m.curs, cur)
	m.lastCur = uint8(len(m.curs) - 1)
	return m.lastCur
}

// setRowCur codes cur as row ri's currency.
func (m *Matcher) setRowCur(ri int32, r *row, cur [3]byte) { r.cur = m.codeCur(&m.ownRowCurs, ri, cur) }

// rowCur is row ri's currency.
func (m *Matcher) rowCur(ri int32) [3]byte { return m.curAt(m.rows[ri].cur, m.ownRowCurs, ri) }

// setCur codes cur as local record li's currency.
func (m *Matcher) setCur(li int32, l *localRow, cur [3]byte) { l.cur = m.codeCur(&m.ownCurs, li, cur) }

// localCur is local record li's currency.
func (m *Matcher) localCur(li int32, l *localRow) [3]byte { return m.curAt(l.cur, m.ownCurs, li) }

// codeCur is the code of row or record i's currency cur, which own keeps
// when it is past the codes.
func (m *Matcher) codeCur(own *map[int32][3]byte, i int32, cur [3]byte) uint8 {
	c := m.curCode(cur)
	if c == ownCode {
		if *own == nil {
			*own = map[int32][3]byte{}
		}
		(*own)[i] = cur
	}
	return c
}

// curAt is the currency of code c, of row or record i when own keeps it.
func (m *Matcher) curAt(c uint8, own map[int32][3]byte, i int32) [3]byte {
	if c == ownCode {
		return own[i]
	}
	return m.curs[c]
}

// wordCode is the code of w, or ownCode.
func (m *Matcher) wordCode(w []byte) uint8 {
	for i, x := range m.words {
		if x == string(w) {
			return uint8(i)
		}
	}
	if len(m.words) == maxWords {
		return ownCode
	}
	m.words = append(m.words, string(w))
	return uint8(len(m.words) - 1)
}

// ownWordKey is where m.ownWords keeps a status (or, with idem, the
// idempotency status) of local record li.
func ownWordKey(li int32, idem bool) int64 {
	k := int64(li) << 1
	if idem {
		k |= 1
	}
	return k
}

// setWord codes w as local record li's status, or with idem its
// idempotency status.
func (m *Matcher) setWord(li int32, l *localRow, idem bool, w []byte) {
	c := m.wordCode(w)
	if c == ownCode {
		if m.ownWords == nil {
			m.ownWords = map[int64]string{}
		}
		m.ownWords[ownWordKey(li, idem)] = string(w)
	}
	if idem {
		l.idem = c
	} else {
		l.status = c
	}
}

// word is local record li's status, or with idem its idempotency status.
func (m *Matcher) word(li int32, l *localRow, idem bool) string {
	c := l.status
	if idem {
		c = l.idem
	}
	if c == ownCode {
		return m.ownWords[ownWordKey(li, idem)]
	}
	return m.words[c]
}

func curOf(s string) (c [3]byte) {
	copy(c[:], s)
	return c
}

func curOfBytes(b []byte) (c [3]byte) {
	copy(c[:], b)
	return c
}

func curString(c [3]byte) string {
	n := 3
	for n > 0 && c[n-1] == 0 {
		n--
	}
	return string(c[:n])
}

// transaction rebuilds row i as a value.
func (m *Matcher) transaction(i int32) reconcile.Transaction {
	r := &m.rows[i]
	return reconcile.Transaction{
		Kind:         kindOf(r.kind),
		OrderNo:      m.arena.str(r.order()),
		RefundNo:     m.arena.str(r.refund()),
		ChannelTxnID: m.arena.str(r.id()),
		Amount:       r.amount,
		Currency:     curString(m.rowCur(i)),
		OccurredAt:   m.timeOf(r.at),
		FeeMilli:     r.fee,
		Status:       statusCodes[r.status],
		RawKind:      m.rawKind(r),
		FeeRate:      m.feeRate(r),
		Line:         int(r.line),
	}
}

// local rebuilds local record i as a value.
func (m *Matcher) local(i int32) *reconcile.LocalRecord {
	l := &m.locals[i]
	r := &m.rows[l.row]
	t, ok := m.localText[i]
	if !ok {
		t = localText{r.order(), r.refund(), r.id()}
		if l.is(localNoID) {
			t.id = span{}
		}
	}
	rec := &reconcile.LocalRecord{
		Kind:         kindOf(l.kind()),
		OrderNo:      m.arena.str(t.order),
		RefundNo:     m.arena.str(t.refund),
		Amount:       l.amount,
		Currency:     curString(m.localCur(i, l)),
		Status:       m.word(i, l, false),
		ChannelTxnID: m.arena.str(t.id),
		IdemStatus:   m.word(i, l, true),
		Customer:     l.customer,
		HasCustomer:  l.is(localCustomer),
		CreatedAt:    m.timeOf(l.created),
	}
	rec.SettledAt = m.timeOf(l.at)
	return rec
}

// unixNano keeps a time as nanoseconds, the zero time as 0.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func (m *Matcher) timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).In(m.loc())
}

func (m *Matcher) loc() *time.Location {
	if m.day.Location == nil {
		return time.UTC
	}
	return m.day.Location
}

func statusCode(s reconcile.TxnStatus) uint8 {
	for i, x := range statusCodes {
		if x == s {
			return uint8(i)
		}
	}
	return 0
}

func (m *Matcher) feeRate(r *row) string {
	if r.feeRate == 0 {
		return ""
	}
	return m.rateWords[r.feeRate-1]
}

// rateCode is the code of a file's fee rate: a file has a handful, and a
// file with more than a thousand keeps only the first thousand.
func (m *Matcher) rateCode(rate string) uint16 {
	if c, ok := m.rates[rate]; ok {
		return c
	}
	if len(m.rateWords) >= 1000 {
		return 0
	}
	if m.rates == nil {
		m.rates = map[string]uint16{}
	}
	rate = strings.Clone(rate) // kept beyond its row
	m.rateWords = append(m.rateWords, rate)
	m.rates[rate] = uint16(len(m.rateWords))
	return uint16(len(m.rateWords))
}
