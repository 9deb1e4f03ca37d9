package matcher

import (
	"encoding/binary"
	"encoding/hex"
	"runtime"
	"time"

	"reconcile"
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
	m.store.Flush()
	if m.nights == nil {
		m.nights = memory.NewReader(tonight{m}, m.metEarlier, m.seenEarlier, m.big)
	}
	return m.nights
}

// metEarlier keeps a row of an earlier night of date with the key of
// group gi. Only its hash is known of its channel id: "fp:" and the hash
// in hex stands for it (rowToken).
func (m *Matcher) metEarlier(gi int32, date time.Time, rec memory.Record) {
	order, refund := m.store.FirstRow(gi)
	var idb [8]byte
	binary.BigEndian.PutUint64(idb[:], rec.ID)
	cur := rec.Currency[:]
	for len(cur) > 0 && cur[len(cur)-1] == 0 {
		cur = cur[:len(cur)-1]
	}
	m.earlier[gi] = append(m.earlier[gi], reconcile.Transaction{
		Kind:         m.store.Kind(gi),
		OrderNo:      order,
		RefundNo:     refund,
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

// NightsRead lets go of what reading the earlier nights' memory needed
// (tonight's keys listed by hash): call it once the Nights reader is
// done with, so that the ledger's answers the rules wait for do not come
// in on top of it. Classify does, if it was not called.
func (m *Matcher) NightsRead() { m.forgetNights() }

// forgetNights lets go of tonight's keys listed for the earlier nights.
func (m *Matcher) forgetNights() {
	if m.nights != nil {
		m.nights.Forget()
		m.nights = nil
	}
}

// tonight is the matcher as the nights' memory sees it: the store's
// keys, and its unseen records' keys.
type tonight struct{ m *Matcher }

func (t tonight) Keys() int { return t.m.store.Groups() }

func (t tonight) HashKeys(gis []int32, hs []memory.KeyHash) { t.m.store.HashKeys(gis, hs) }

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

// Memory returns the night's memory of the rows added so far, as it is
// stored. Call it last, after Classify: it lets go of what classification
// needed (the key groups, the local records, the hash table) before it
// writes the records, so a night of millions of rows does not hold both
// at once, and of the rest after; the matcher cannot be used again.
func (m *Matcher) Memory() reconcile.NightMemory {
	m.forgetCases()
	m.forgetNights()
	m.store.Release()
	m.earlier = nil
	rows := m.store.RowCount()
	if rows > 1<<20 {
		runtime.GC() // so the records reuse that memory instead of adding to it
	}
	w := memory.NewWriter(rows)
	m.store.Remember(w)
	m.store.Close()
	m.big.Release()
	return w.Done()
}
