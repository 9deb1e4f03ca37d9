package matcher

import (
	"encoding/binary"
	"encoding/hex"
	"runtime"
	"time"

	"reconcile"
	"reconcile/matcher/internal/offheap"
	"reconcile/matcher/internal/work"
	"reconcile/matcher/memory"
)

// Keys have a memory across nights (rule 7): tonight's keys meet the
// earlier nights' memory through a memory.Reader (Nights), which tells
// the matcher each earlier row of one of its keys, and each local record
// without a row tonight that an earlier night's file carried. Memory
// writes tonight's for the nights after.

// Nights returns the reader through which tonight's keys meet the earlier
// nights' memory: the ledger gives it the nights (ledger.MemoryBefore).
// Call it once every row is in; the reader lists the keys as they are
// then.
func (m *Matcher) Nights() *memory.Reader {
	m.flush()
	if m.nights == nil {
		m.nights = memory.NewReader(tonight{m}, m.metEarlier, m.seenEarlier, m.big)
	}
	return m.nights
}

// metEarlier keeps a row of an earlier night of date with the key of
// group gi. Only its hash is known of its channel id: "fp:" and the hash
// in hex stands for it (rowToken).
func (m *Matcher) metEarlier(gi int32, date time.Time, rec memory.Record) {
	g := &m.groups[gi]
	first := &m.rows[g.first]
	var idb [8]byte
	binary.BigEndian.PutUint64(idb[:], rec.ID)
	cur := rec.Currency[:]
	for len(cur) > 0 && cur[len(cur)-1] == 0 {
		cur = cur[:len(cur)-1]
	}
	m.earlier[gi] = append(m.earlier[gi], reconcile.Transaction{
		Kind:         kindOf(g.kind()),
		OrderNo:      m.arena.str(first.order()),
		RefundNo:     m.arena.str(first.refund()),
		ChannelTxnID: "fp:" + hex.EncodeToString(idb[:]),
		Amount:       rec.Amount,
		Currency:     string(cur),
		Status:       rec.Status,
		OccurredAt:   date,
	})
}

// seenEarlier marks unseen record ui as settled by an earlier night's
// file.
func (m *Matcher) seenEarlier(ui int32) { m.unseenSeen[ui] = true }

// forgetNights lets go of tonight's keys listed for the earlier nights.
func (m *Matcher) forgetNights() {
	if m.nights != nil {
		m.nights.Forget()
		m.nights = nil
	}
}

// tonight is the matcher as the nights' memory sees it: its groups' keys,
// and its unseen records' keys.
type tonight struct{ m *Matcher }

func (t tonight) Keys() int { return len(t.m.groups) }

// HashKeys hashes a batch of groups' keys: their rows and keys, each one
// a wait for main memory, are loaded together first, as lookups are
// (batch.go). At ten million keys in 16 passes, hashing them one at a
// time had taken four times as long as hashing them all in order.
func (t tonight) HashKeys(gis []int32, hs []memory.KeyHash) {
	m := t.m
	var sink byte
	for _, gi := range gis {
		sink += byte(m.rows[m.groups[gi].first].kind)
	}
	for _, gi := range gis {
		sink += m.arena.b[m.groupKey(&m.groups[gi]).off]
	}
	for i, gi := range gis {
		g := &m.groups[gi]
		hs[i] = memory.HashKey(kindOf(g.kind()), m.arena.bytes(m.groupKey(g)))
	}
	m.batch.sink += uint64(sink) // keeps the warming loads
}

func (t tonight) Unseen() []memory.KeyHash {
	out := make([]memory.KeyHash, len(t.m.unseen))
	for i, rec := range t.m.unseen {
		out[i] = memory.HashKey(rec.Kind, []byte(rec.Key()))
	}
	return out
}

// rowToken stands for what identifies a row, known only by its hash: a
// row of an earlier night carries it, and a row of tonight is compared by
// it.
func rowToken(t reconcile.Transaction) string {
	if len(t.ChannelTxnID) > 3 && t.ChannelTxnID[:3] == "fp:" {
		return t.ChannelTxnID
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], memory.RowID(t))
	return "fp:" + hex.EncodeToString(b[:])
}

var statusCodes = []reconcile.TxnStatus{reconcile.StatusSuccess, reconcile.StatusProcessing, reconcile.StatusFailed}

// Memory returns the night's memory of the rows added so far, as it is
// stored. Call it last, after Classify: it lets go of what classification
// needed (the key groups, the local records, the hash table) before it
// writes the records, so a night of millions of rows does not hold both
// at once, and of the rest after; the matcher cannot be used again.
func (m *Matcher) Memory() reconcile.NightMemory {
	m.flush()
	m.forgetNights()
	groups, locals, slots := m.groups, m.locals, m.tab.slots
	m.groups, m.locals, m.tab.slots, m.earlier, m.localText = nil, nil, nil, nil, nil
	offheap.Free(m.big, groups)
	offheap.Free(m.big, locals)
	offheap.Free(m.big, slots)
	if len(m.rows) > 1<<20 {
		runtime.GC() // so the records reuse that memory instead of adding to it
	}
	// Hashing is most of the work, and each record is its own: the rows
	// are cut in one range per processor.
	w := memory.NewWriter(len(m.rows))
	workers := work.For(len(m.rows))
	work.Parallel(workers, func(wk int) {
		lo, hi := work.Share(wk, workers, len(m.rows))
		for i := lo; i < hi; i++ {
			r := &m.rows[i]
			id := memory.HashID(m.arena.bytes(r.id()))
			if r.idN == 0 {
				id = memory.RowID(m.transaction(int32(i))) // rare: a row without a channel id
			}
			kind := kindOf(r.kind)
			w.Put(i, kind, memory.Record{Key: memory.HashKey(kind, m.arena.bytes(r.key())), ID: id,
				Amount: r.amount, Currency: m.rowCur(int32(i)), Status: statusCodes[r.status]})
		}
	})
	m.rows, m.arena.b, m.pairs = nil, nil, pairCounters{}
	m.big.Release()
	return w.Done()
}
