package matcher

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"reconcile"
)

// The memory of a night is every payment and refund row of its file, kept
// as one sorted blob of fixed-width records rather than a table row per
// settlement row: a night of millions of rows is written in one statement
// and read back in one, and a key is found by binary search.
//
// A record is 40 bytes: the key's 128-bit hash (SHA-256, truncated), the
// channel id's 64-bit FNV-1a hash, the amount in minor units, the currency,
// the status and the kind. A 128-bit key hash makes two different keys
// colliding, which could turn a new payment into a false duplicate, as
// unlikely as a hardware fault; a collision of channel id hashes can only
// make a duplicate look like the same row again, which sends nothing to
// an automatic reversal.
const recordSize = 40

type keyHash [16]byte

// sortedSize is the size of an entry of Matcher.sorted: the key hash of a
// group of tonight's file, then the group's index.
const sortedSize = 20

// Tonight's keys meet the earlier nights' memory one range of key hashes
// at a time, a pass: the keys of a pass are listed by hash, and each
// night's filter is read for that range and its parts in it. Listed all at
// once, ten million keys were 220 MB at the top of the run's memory; a
// pass holds about passKeys of them.
var passKeys = 1 << 20

// maxPassBits bounds the passes at 1<<maxPassBits: a night's filter has
// at least that many blocks once its passes cut it.
const maxPassBits = 6

// passBitsFor returns how many first bits of a key hash number the
// passes over n keys.
func passBitsFor(n int) int {
	bits := 0
	for bits < maxPassBits && n > passKeys<<bits {
		bits++
	}
	return bits
}

// hashPasses notes the pass of each of tonight's groups, and how many
// each processor's range of them has in each pass, so that a pass is
// listed by hashing only its own keys: every key is hashed twice in all,
// once here and once in its pass. A single pass holds every group, and
// no key is hashed here.
func (m *Matcher) hashPasses() {
	m.hashed, m.passBits, m.pass = true, passBitsFor(len(m.groups)), -1
	n, passes := len(m.groups), 1<<m.passBits
	m.passCounts = make([][]int32, workersFor(n))
	if passes == 1 {
		for w := range m.passCounts {
			lo, hi := share(w, len(m.passCounts), n)
			m.passCounts[w] = []int32{int32(hi - lo)}
		}
		return
	}
	m.passOf = bigSlice[uint8](m.big, n, true, false)
	parallel(len(m.passCounts), func(w int) {
		counts := make([]int32, passes)
		lo, hi := share(w, len(m.passCounts), n)
		for gi := lo; gi < hi; gi++ {
			h := m.groupHash(gi)
			p := prefix(h[:], m.passBits)
			m.passOf[gi] = uint8(p)
			counts[p]++
		}
		m.passCounts[w] = counts
	})
}

// listPass lists the groups of pass p by key hash into m.sorted, in place
// of the pass listed before.
func (m *Matcher) listPass(p int) {
	freeBig(m.big, m.sorted)
	m.sorted, m.pass = nil, p
	n, workers := len(m.groups), len(m.passCounts)
	at := make([]int, workers+1) // where each processor's entries of the pass begin
	for w := range workers {
		at[w+1] = at[w] + int(m.passCounts[w][p])
	}
	list := passingBytes(m.big, at[workers]*sortedSize)
	sinks := make([]byte, workers)
	parallel(workers, func(w int) {
		lo, hi := share(w, workers, n)
		// Appending to an empty slice of the processor's room writes in place.
		e := list[at[w]*sortedSize : at[w]*sortedSize]
		// A pass's groups are one in so many of the rows and the arena,
		// each a wait for main memory: they are hashed in batches whose
		// rows and keys are first loaded together, as lookups are
		// (batch.go). At ten million keys in 16 passes, hashing them one at
		// a time had taken four times as long as hashing them all in order.
		var gis [batchSize]int32
		var sink byte
		k := 0
		hash := func() {
			for _, gi := range gis[:k] {
				sink += byte(m.rows[m.groups[gi].first].kind)
			}
			for _, gi := range gis[:k] {
				sink += m.arena.b[m.groupKey(&m.groups[gi]).off]
			}
			for _, gi := range gis[:k] {
				h := m.groupHash(int(gi))
				e = binary.BigEndian.AppendUint32(append(e, h[:]...), uint32(gi))
			}
			k = 0
		}
		for gi := lo; gi < hi; gi++ {
			if m.passOf != nil && int(m.passOf[gi]) != p {
				continue
			}
			gis[k] = int32(gi)
			if k++; k == batchSize {
				hash()
			}
		}
		hash()
		sinks[w] = sink
	})
	for _, s := range sinks {
		m.batch.sink += uint64(s) // keeps the warming loads
	}
	m.sorted = sortFixedInto(passingBytes(m.big, len(list)), list, sortedSize)
	freeBig(m.big, list)
}

// groupHash is the key hash of group gi.
func (m *Matcher) groupHash(gi int) keyHash {
	g := &m.groups[gi]
	return hashKeyBytes(kindOf(g.kind()), m.arena.bytes(m.groupKey(g)))
}

// workersFor is how many processors share a pass over n items.
func workersFor(n int) int { return min(runtime.GOMAXPROCS(0), max(1, n/100000)) }

func hashKey(kind reconcile.Kind, key string) keyHash {
	return hashKeyBytes(kind, []byte(key))
}

// hashKeyBytes is the first 16 bytes of SHA-256 over kind, a zero byte
// and the key: evenly spread in every byte (which the sort relies on) and
// fast with the processor's SHA instructions.
func hashKeyBytes(kind reconcile.Kind, key []byte) keyHash {
	var buf [96]byte
	msg := append(append(append(buf[:0], kind...), 0), key...)
	sum := sha256.Sum256(msg)
	var k keyHash
	copy(k[:], sum[:16])
	return k
}

func hashID(id string) uint64 { return hashIDBytes([]byte(id)) }

// hashIDBytes is FNV-1a, 64 bits, written out so it allocates nothing.
func hashIDBytes(id []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range id {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// rowIDHash is what a night's memory keeps of what identifies a row: the
// hash of its channel id, or, for a row its file gave none, of its
// fingerprint, so that a row without an id settled again the next night
// is told apart from the same row delivered again.
func rowIDHash(t reconcile.Transaction) uint64 {
	if t.ChannelTxnID == "" {
		return hashID("row:" + t.Fingerprint())
	}
	return hashID(t.ChannelTxnID)
}

// rowToken stands for what identifies a row, known only by its hash: a
// row of an earlier night carries it, and a row of tonight is compared by
// it.
func rowToken(t reconcile.Transaction) string {
	if len(t.ChannelTxnID) > 3 && t.ChannelTxnID[:3] == "fp:" {
		return t.ChannelTxnID
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], rowIDHash(t))
	return "fp:" + hex.EncodeToString(b[:])
}

var statusCodes = []reconcile.TxnStatus{reconcile.StatusSuccess, reconcile.StatusProcessing, reconcile.StatusFailed}

// Memory returns the memory blob of the rows added so far. Call it last,
// after Classify: it lets go of what classification needed (the key groups,
// the local records, the hash table) before it builds the blob, so a night
// of millions of rows does not hold both at once, and of the rest after;
// the matcher cannot be used again.
func (m *Matcher) Memory() []byte {
	m.flush()
	m.forgetPasses()
	groups, locals, slots := m.groups, m.locals, m.tab.slots
	m.groups, m.locals, m.tab.slots, m.earlier, m.localText = nil, nil, nil, nil, nil
	freeBig(m.big, groups)
	freeBig(m.big, locals)
	freeBig(m.big, slots)
	if len(m.rows) > 1<<20 {
		runtime.GC() // so the blob reuses that memory instead of adding to it
	}
	// Hashing is most of the work, and each record is its own: the rows
	// are cut in one range per processor.
	out := make([]byte, len(m.rows)*recordSize)
	workers := workersFor(len(m.rows))
	parallel(workers, func(w int) {
		lo, hi := share(w, workers, len(m.rows))
		for i := lo; i < hi; i++ {
			r := &m.rows[i]
			key := r.key()
			id := hashIDBytes(m.arena.bytes(r.id()))
			if r.idN == 0 {
				id = rowIDHash(m.transaction(int32(i))) // rare: a row without a channel id
			}
			// Appending to an empty slice of the record's room writes in place.
			appendRecord(out[i*recordSize:i*recordSize], hashKeyBytes(kindOf(r.kind), m.arena.bytes(key)), id,
				r.amount, m.rowCur(int32(i)), r.status, r.kind)
		}
	})
	m.rows, m.arena.b, m.pairs = nil, nil, pairCounters{}
	m.big.release()
	return sortRecords(out)
}

// appendRecord appends one record. Its status and kind are the codes of
// the index, stored one up: a status byte of 0 reads as success, and the
// kind byte is 1 for a payment and 2 for a refund, as the memories of
// earlier nights hold them. The kind byte is not read back (the key hash
// covers the kind), but it is part of the stored layout all the same.
func appendRecord(out []byte, k keyHash, id uint64, amount int64, cur [3]byte, status, kind uint8) []byte {
	out = append(out, k[:]...)
	out = binary.BigEndian.AppendUint64(out, id)
	out = binary.BigEndian.AppendUint64(out, uint64(amount))
	out = append(out, cur[:]...)
	return append(out, status+1, kind+1, 0, 0, 0)
}

// sortRecords sorts the records by key hash. The hashes are uniform, so
// one pass that scatters the records into about n/4 buckets by their
// leading bits leaves a handful of records in each, finished by insertion
// sort: linear time, where a comparison sort of millions of 40-byte records
// is the slowest step of writing the memory. Each processor scatters its
// own range of records into its own places in the buckets, then sorts its
// own range of buckets.
func sortRecords(out []byte) []byte { return sortFixed(out, recordSize) }

// sortFixed sorts records of size bytes that begin with a key hash.
func sortFixed(out []byte, recordSize int) []byte {
	if len(out) < 2*recordSize {
		return out
	}
	return sortFixedInto(make([]byte, len(out)), out, recordSize)
}

// sortFixedInto sorts the records of out into sorted, as long as out.
func sortFixedInto(sorted, out []byte, recordSize int) []byte {
	n := len(out) / recordSize
	if n < 2 {
		copy(sorted, out)
		return sorted
	}
	bits := 1
	for bits < 30 && 1<<(bits+2) < n {
		bits++
	}
	shift := 32 - bits
	buckets := 1 << bits
	bucket := func(i int) int { return int(binary.BigEndian.Uint32(out[i*recordSize:]) >> shift) }
	workers := min(runtime.GOMAXPROCS(0), max(1, n/(1<<16)))

	// next[w][b] is where worker w puts its next record of bucket b.
	next := make([][]int32, workers)
	parallel(workers, func(w int) {
		counts := make([]int32, buckets)
		lo, hi := share(w, workers, n)
		for i := lo; i < hi; i++ {
			counts[bucket(i)]++
		}
		next[w] = counts
	})
	start := make([]int32, buckets+1)
	var pos int32
	for b := 0; b < buckets; b++ {
		start[b] = pos
		for w := 0; w < workers; w++ {
			c := next[w][b]
			next[w][b] = pos
			pos += c
		}
	}
	start[buckets] = int32(n)

	parallel(workers, func(w int) {
		lo, hi := share(w, workers, n)
		for i := lo; i < hi; i++ {
			b := bucket(i)
			copy(sorted[int(next[w][b])*recordSize:], out[i*recordSize:(i+1)*recordSize])
			next[w][b]++
		}
	})
	parallel(workers, func(w int) {
		tmp := make([]byte, recordSize)
		blo, bhi := share(w, workers, buckets)
		for b := blo; b < bhi; b++ {
			lo, hi := int(start[b]), int(start[b+1])
			for i := lo + 1; i < hi; i++ {
				// Record i goes after the records before it with a smaller
				// hash; those with a larger one move up by one.
				if !hashLess(sorted[i*recordSize:], sorted[(i-1)*recordSize:]) {
					continue
				}
				copy(tmp, sorted[i*recordSize:(i+1)*recordSize])
				j := i - 1
				for j > lo && hashLess(tmp, sorted[(j-1)*recordSize:]) {
					j--
				}
				copy(sorted[(j+1)*recordSize:(i+1)*recordSize], sorted[j*recordSize:i*recordSize])
				copy(sorted[j*recordSize:(j+1)*recordSize], tmp)
			}
		}
	})
	return sorted
}

// hashLess reports whether the key hash that a begins with is less than
// b's: compared by its first eight bytes, which decide nearly always, then
// by the other eight.
func hashLess(a, b []byte) bool {
	if x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b); x != y {
		return x < y
	}
	return binary.BigEndian.Uint64(a[8:]) < binary.BigEndian.Uint64(b[8:])
}

// share is the range [lo, hi) of n items that worker w of workers takes:
// the workers' ranges cover 0 to n once, in order.
func share(w, workers, n int) (lo, hi int) { return w * n / workers, (w + 1) * n / workers }

// parallel runs fn(0) … fn(workers-1) at once and waits for them.
func parallel(workers int, fn func(w int)) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() { fn(w) })
	}
	wg.Wait()
}

// MemoryRows is the number of rows a memory blob holds.
func MemoryRows(blob []byte) int { return len(blob) / recordSize }

// ErrMemory is returned for a memory blob that is not a whole number of
// records.
var ErrMemory = errors.New("memory blob is damaged")

// AddMemory takes the memory of an earlier night (its business date and
// blob, or the parts of it MemoryParts names, one after another, in
// order). Rows of it with keys of tonight's file become earlier rows of
// those keys (rule 7); local records of tonight's date missing from
// tonight's file whose keys it carries were settled then, not missed. Call
// it after AddRow and AddLocalRow, before Classify. Of tonight's keys,
// those of the current pass (MemoryPass) meet it: the parts of a night
// are read again in each pass.
func (m *Matcher) AddMemory(date time.Time, blob []byte) error {
	if len(blob)%recordSize != 0 {
		return fmt.Errorf("%w: %d bytes", ErrMemory, len(blob))
	}
	m.flush()
	m.prepareMemory()
	merge(blob, m.sorted, func(rec []byte, gi int32) {
		g := &m.groups[gi]
		first := &m.rows[g.first]
		status := reconcile.StatusSuccess
		if c := int(rec[35]); c >= 1 && c <= len(statusCodes) {
			status = statusCodes[c-1]
		}
		var idb [8]byte
		copy(idb[:], rec[16:24])
		m.earlier[gi] = append(m.earlier[gi], reconcile.Transaction{
			Kind:         kindOf(g.kind()),
			OrderNo:      m.arena.str(first.order()),
			RefundNo:     m.arena.str(first.refund()),
			ChannelTxnID: "fp:" + hex.EncodeToString(idb[:]),
			Amount:       int64(binary.BigEndian.Uint64(rec[24:32])),
			Currency:     string(bytes.TrimRight(rec[32:35], "\x00")),
			Status:       status,
			OccurredAt:   date,
		})
	})
	merge(blob, m.unseenSorted, func(_ []byte, ui int32) { m.unseenSeen[ui] = true })
	return nil
}

// HashKeys hashes tonight's keys for meeting earlier nights' memory, as
// MemoryPasses, MemoryParts and AddMemory need. They do it themselves
// when it has not been done; a run that will read earlier nights calls it
// once the day's window of local records is in, before the keys outside
// it are looked up.
func (m *Matcher) HashKeys() {
	m.flush()
	if !m.hashed {
		m.hashPasses()
	}
}

// MemoryPasses returns how many passes tonight's keys meet the memory of
// earlier nights in: 1<<n for n first bits of the key hash, about
// passKeys keys each. Call it after AddRow and AddLocalRow.
func (m *Matcher) MemoryPasses() int {
	m.flush()
	m.HashKeys()
	return 1 << m.passBits
}

// MemoryPass lists the keys of pass p (0 ≤ p < MemoryPasses) by key hash,
// letting go of the pass before: the filter ranges, parts and blobs given
// to FilterRange, MemoryParts and AddMemory from then on are met by those
// keys. Without it, the first is listed.
func (m *Matcher) MemoryPass(p int) {
	m.flush()
	m.prepareMemory()
	if p != m.pass {
		m.listPass(p)
	}
}

// prepareMemory hashes tonight's keys into their passes and lists the
// first, and lists the keys of the local records missing from tonight's
// file by key hash, once, for filtering and merging earlier nights'
// memory.
func (m *Matcher) prepareMemory() {
	if m.memoryReady {
		return
	}
	m.memoryReady = true
	m.HashKeys()
	m.listPass(0)
	u := make([]byte, len(m.unseen)*sortedSize)
	for i, rec := range m.unseen {
		h := hashKey(rec.Kind, rec.Key())
		copy(u[i*sortedSize:], h[:])
		binary.BigEndian.PutUint32(u[i*sortedSize+16:], uint32(i))
	}
	m.unseenSorted = sortFixed(u, sortedSize)
}

// forgetPasses lets go of tonight's keys listed for the earlier nights'
// memory: at ten million keys, 11 MB of passes and a pass's list.
func (m *Matcher) forgetPasses() {
	freeBig(m.big, m.sorted)
	freeBig(m.big, m.passOf)
	m.sorted, m.unseenSorted, m.passOf, m.passCounts = nil, nil, nil, nil
	m.hashed, m.memoryReady = false, false
}

// merge calls fn for each record of blob and each entry of sorted (a key
// hash and an index) with the record's key hash. Both are sorted by key
// hash; the pass starts at the first entry the blob can match, as a blob
// may be one small part of a night.
func merge(blob, sorted []byte, fn func(rec []byte, index int32)) {
	n, entries := len(blob)/recordSize, len(sorted)/sortedSize
	if n == 0 || entries == 0 {
		return
	}
	key := func(j int) []byte { return sorted[j*sortedSize : j*sortedSize+16] }
	j := sort.Search(entries, func(j int) bool { return bytes.Compare(key(j), blob[:16]) >= 0 })
	for i := 0; i < n && j < entries; {
		rec := blob[i*recordSize : (i+1)*recordSize]
		switch c := bytes.Compare(rec[:16], key(j)); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			for k := j; k < entries && bytes.Equal(key(k), rec[:16]); k++ {
				fn(rec, int32(binary.BigEndian.Uint32(sorted[k*sortedSize+16:])))
			}
			i++
		}
	}
}
