package matcher

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"time"

	"reconcile"
)

// The memory of a night is every payment and refund row of its file, kept
// as one sorted blob of fixed-width records rather than a table row per
// settlement row: a night of millions of rows is written in one statement
// and read back in one, and a key is found by binary search.
//
// A record is 40 bytes: the key's 128-bit FNV-1a hash (kind and key), the
// channel id's 64-bit FNV-1a hash, the amount in minor units, the currency,
// the status and the kind. A 128-bit key hash makes two different keys
// colliding, which could turn a new payment into a false duplicate, as
// unlikely as a hardware fault; a collision of channel id hashes can only
// make a duplicate look like the same row again, which sends nothing to
// an automatic reversal.
const recordSize = 40

type keyHash [16]byte

// hashedGroup is a group of tonight's file under its key hash.
type hashedGroup struct {
	h keyHash
	g *group
}

func hashKey(kind reconcile.Kind, key string) keyHash {
	h := fnv.New128a()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(key))
	var k keyHash
	h.Sum(k[:0])
	return k
}

func hashID(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// idToken stands for a channel id known only by its hash: a row of an
// earlier night carries it, and a row of tonight is compared by it.
func idToken(id string) string {
	if len(id) > 3 && id[:3] == "fp:" {
		return id
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], hashID(id))
	return "fp:" + hex.EncodeToString(b[:])
}

var statusCodes = []reconcile.TxnStatus{reconcile.StatusSuccess, reconcile.StatusProcessing, reconcile.StatusFailed}

// EncodeMemory returns the memory blob of a night's rows. Only payments
// and refunds are remembered.
func EncodeMemory(rows []reconcile.Transaction) []byte {
	out := make([]byte, 0, len(rows)*recordSize)
	for _, r := range rows {
		if r.Kind != reconcile.KindPayment && r.Kind != reconcile.KindRefund {
			continue
		}
		k := hashKey(r.Kind, r.Key())
		out = append(out, k[:]...)
		out = binary.BigEndian.AppendUint64(out, hashID(r.ChannelTxnID))
		out = binary.BigEndian.AppendUint64(out, uint64(r.Amount))
		var cur [3]byte
		copy(cur[:], r.Currency)
		out = append(out, cur[:]...)
		out = append(out, byte(slices.Index(statusCodes, r.Status)+1), kindCode(r.Kind), 0, 0, 0)
	}
	n := len(out) / recordSize
	sort.Sort(records{out, n, make([]byte, recordSize)})
	return out
}

func kindCode(k reconcile.Kind) byte {
	if k == reconcile.KindRefund {
		return 2
	}
	return 1
}

type records struct {
	b   []byte
	n   int
	tmp []byte
}

func (r records) Len() int { return r.n }
func (r records) Less(i, j int) bool {
	return bytes.Compare(r.b[i*recordSize:i*recordSize+16], r.b[j*recordSize:j*recordSize+16]) < 0
}
func (r records) Swap(i, j int) {
	a, b := r.b[i*recordSize:(i+1)*recordSize], r.b[j*recordSize:(j+1)*recordSize]
	copy(r.tmp, a)
	copy(a, b)
	copy(b, r.tmp)
}

// MemoryRows is the number of rows a memory blob holds.
func MemoryRows(blob []byte) int { return len(blob) / recordSize }

// ErrMemory is returned for a memory blob that is not a whole number of
// records.
var ErrMemory = errors.New("memory blob is damaged")

// AddMemory takes the memory of an earlier night (its business date and
// blob). Rows of it with keys of tonight's file become earlier rows of
// those keys (rule 7); local records of tonight's date missing from
// tonight's file whose keys it carries were settled then, not missed. Call
// it after AddRow and AddLocal, before Result.
func (m *Matcher) AddMemory(date time.Time, blob []byte) error {
	if len(blob)%recordSize != 0 {
		return fmt.Errorf("%w: %d bytes", ErrMemory, len(blob))
	}
	n := len(blob) / recordSize
	if m.sorted == nil {
		m.sorted = make([]hashedGroup, 0, len(m.groups))
		for k, g := range m.groups {
			m.sorted = append(m.sorted, hashedGroup{hashKey(k.kind, k.key), g})
		}
		slices.SortFunc(m.sorted, func(a, b hashedGroup) int { return bytes.Compare(a.h[:], b.h[:]) })
	}
	// Both sides are sorted by key hash: one merge pass over the blob.
	j := 0
	for i := 0; i < n && j < len(m.sorted); {
		rec := blob[i*recordSize : (i+1)*recordSize]
		c := bytes.Compare(rec[:16], m.sorted[j].h[:])
		if c < 0 {
			i++
			continue
		}
		if c > 0 {
			j++
			continue
		}
		i++
		g := m.sorted[j].g
		status := reconcile.StatusSuccess
		if c := int(rec[35]); c >= 1 && c <= len(statusCodes) {
			status = statusCodes[c-1]
		}
		var idb [8]byte
		copy(idb[:], rec[16:24])
		e := reconcile.Transaction{
			Kind:         g.rows[0].Kind,
			OrderNo:      g.rows[0].OrderNo,
			RefundNo:     g.rows[0].RefundNo,
			ChannelTxnID: "fp:" + hex.EncodeToString(idb[:]),
			Amount:       int64(binary.BigEndian.Uint64(rec[24:32])),
			Currency:     string(bytes.TrimRight(rec[32:35], "\x00")),
			Status:       status,
			OccurredAt:   date,
		}
		g.earlier = append(g.earlier, e)
	}
	for i, rec := range m.unseen {
		if m.unseenSeen[i] {
			continue
		}
		k := hashKey(rec.Kind, rec.Key())
		j := sort.Search(n, func(j int) bool { return bytes.Compare(blob[j*recordSize:j*recordSize+16], k[:]) >= 0 })
		if j < n && bytes.Equal(blob[j*recordSize:j*recordSize+16], k[:]) {
			m.unseenSeen[i] = true
		}
	}
	return nil
}
