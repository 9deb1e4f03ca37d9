package rowstore

import (
	"encoding/binary"
	"strings"

	"reconcile"
)

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
func (s *Store) addRawKind(w string) uint8 {
	if w == "" {
		return 0
	}
	for i, k := range s.rawKinds {
		if string(s.arena.bytes(k)) == w {
			return uint8(i + 1)
		}
	}
	if len(s.rawKinds) < maxRawKinds {
		s.rawKinds = append(s.rawKinds, s.arena.add(w))
		return uint8(len(s.rawKinds))
	}
	s.arena.b = binary.AppendUvarint(s.arena.b, uint64(len(w)))
	s.arena.b = append(s.arena.b, w...)
	return ownCode
}

// rawKind is the row's own word for its kind.
func (s *Store) rawKind(r *row) string {
	switch r.rawKind {
	case 0:
		return ""
	case ownCode:
		end := r.id()
		b := s.arena.b[end.off+end.n:]
		n, w := binary.Uvarint(b)
		return string(b[w : w+int(n)])
	}
	return s.arena.str(s.rawKinds[r.rawKind-1])
}

// A local record's status and idempotency status are codes of the words
// a run has seen (s.words), of which local tables have a handful. Past
// maxWords, a record's word is its own, kept under the record in
// s.ownWords: a table that writes a status of its own on every record (a
// view gone wrong, or a hostile one) costs a map entry per record, never
// a search through every word seen, nor another record's word.
const maxWords = 32

// A currency is a code too, of s.curs, a row's as a local record's; a
// run of more than maxCurs currencies keeps the rest under the row or
// record, in s.ownRowCurs and s.ownCurs. Rows come in runs of one
// currency: the code of the last is tried first.
const maxCurs = 254

// curCode is the code of cur, or ownCode.
func (s *Store) curCode(cur [3]byte) uint8 {
	if int(s.lastCur) < len(s.curs) && s.curs[s.lastCur] == cur {
		return s.lastCur
	}
	for i, c := range s.curs {
		if c == cur {
			s.lastCur = uint8(i)
			return s.lastCur
		}
	}
	if len(s.curs) == maxCurs {
		return ownCode
	}
	s.curs = append(s.curs, cur)
	s.lastCur = uint8(len(s.curs) - 1)
	return s.lastCur
}

// setRowCur codes cur as row ri's currency.
func (s *Store) setRowCur(ri int32, r *row, cur [3]byte) { r.cur = s.codeCur(&s.ownRowCurs, ri, cur) }

// rowCur is row ri's currency.
func (s *Store) rowCur(ri int32) [3]byte { return s.curAt(s.rows[ri].cur, s.ownRowCurs, ri) }

// setCur codes cur as local record li's currency.
func (s *Store) setCur(li int32, l *localRow, cur [3]byte) { l.cur = s.codeCur(&s.ownCurs, li, cur) }

// localCur is local record li's currency.
func (s *Store) localCur(li int32, l *localRow) [3]byte { return s.curAt(l.cur, s.ownCurs, li) }

// codeCur is the code of row or record i's currency cur, which own keeps
// when it is past the codes.
func (s *Store) codeCur(own *map[int32][3]byte, i int32, cur [3]byte) uint8 {
	c := s.curCode(cur)
	if c == ownCode {
		if *own == nil {
			*own = map[int32][3]byte{}
		}
		(*own)[i] = cur
	}
	return c
}

// curAt is the currency of code c, of row or record i when own keeps it.
func (s *Store) curAt(c uint8, own map[int32][3]byte, i int32) [3]byte {
	if c == ownCode {
		return own[i]
	}
	return s.curs[c]
}

// wordCode is the code of w, or ownCode.
func (s *Store) wordCode(w []byte) uint8 {
	for i, x := range s.words {
		if x == string(w) {
			return uint8(i)
		}
	}
	if len(s.words) == maxWords {
		return ownCode
	}
	s.words = append(s.words, string(w))
	return uint8(len(s.words) - 1)
}

// ownWordKey is where s.ownWords keeps a status (or, with idem, the
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
func (s *Store) setWord(li int32, l *localRow, idem bool, w []byte) {
	c := s.wordCode(w)
	if c == ownCode {
		if s.ownWords == nil {
			s.ownWords = map[int64]string{}
		}
		s.ownWords[ownWordKey(li, idem)] = string(w)
	}
	if idem {
		l.idem = c
	} else {
		l.status = c
	}
}

// word is local record li's status, or with idem its idempotency status.
func (s *Store) word(li int32, l *localRow, idem bool) string {
	c := l.status
	if idem {
		c = l.idem
	}
	if c == ownCode {
		return s.ownWords[ownWordKey(li, idem)]
	}
	return s.words[c]
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
func (s *Store) transaction(i int32) reconcile.Transaction {
	r := &s.rows[i]
	return reconcile.Transaction{
		Kind:         kindOf(r.kind),
		OrderNo:      s.arena.str(r.order()),
		RefundNo:     s.arena.str(r.refund()),
		ChannelTxnID: s.arena.str(r.id()),
		Amount:       r.amount,
		Currency:     curString(s.rowCur(i)),
		OccurredAt:   s.timeOf(r.at),
		FeeMilli:     r.fee,
		Status:       statusCodes[r.status],
		RawKind:      s.rawKind(r),
		FeeRate:      s.feeRate(r),
		Line:         int(r.line),
	}
}

// local rebuilds local record i as a value.
func (s *Store) local(i int32) *reconcile.LocalRecord {
	l := &s.locals[i]
	r := &s.rows[l.row]
	t, ok := s.localText[i]
	if !ok {
		t = localText{r.order(), r.refund(), r.id()}
		if l.is(localNoID) {
			t.id = span{}
		}
	}
	rec := &reconcile.LocalRecord{
		Kind:         kindOf(l.kind()),
		OrderNo:      s.arena.str(t.order),
		RefundNo:     s.arena.str(t.refund),
		Amount:       l.amount,
		Currency:     curString(s.localCur(i, l)),
		Status:       s.word(i, l, false),
		ChannelTxnID: s.arena.str(t.id),
		IdemStatus:   s.word(i, l, true),
		Customer:     l.customer,
		HasCustomer:  l.is(localCustomer),
		CreatedAt:    s.timeOf(l.created),
	}
	rec.SettledAt = s.timeOf(l.at)
	return rec
}

func (s *Store) feeRate(r *row) string {
	if r.feeRate == 0 {
		return ""
	}
	return s.rateWords[r.feeRate-1]
}

// rateCode is the code of a file's fee rate: a file has a handful, and a
// file with more than a thousand keeps only the first thousand.
func (s *Store) rateCode(rate string) uint16 {
	if c, ok := s.rates[rate]; ok {
		return c
	}
	if len(s.rateWords) >= 1000 {
		return 0
	}
	if s.rates == nil {
		s.rates = map[string]uint16{}
	}
	rate = strings.Clone(rate) // kept beyond its row
	s.rateWords = append(s.rateWords, rate)
	s.rates[rate] = uint16(len(s.rateWords))
	return uint16(len(s.rateWords))
}
