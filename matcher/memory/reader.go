package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"time"

	"reconcile/matcher/internal/offheap"
	"reconcile/matcher/internal/work"
)

// Tonight is tonight's side of the meeting with earlier nights: the keys
// of its file (by index, 0 to Keys()-1) and the keys of its local records
// that have no row tonight (unseen), which an earlier night's file may
// have settled.
type Tonight interface {
	Keys() int
	// HashKeys writes the hash of each key of indexes into hashes (as
	// long): a batch, whose keys the source may load together.
	HashKeys(indexes []int32, hashes []KeyHash)
	// Unseen returns the hashes of the unseen records' keys, by their
	// index.
	Unseen() []KeyHash
}

// Met is told of each record of an earlier night (of date) with one of
// tonight's keys, key the key's index; Seen of each unseen record one
// carried.
type (
	Met  func(key int32, date time.Time, rec Record)
	Seen func(unseen int32)
)

// Tonight's keys meet the earlier nights' memory one range of key hashes
// at a time, a pass: the keys of a pass are listed by hash, and each
// night's filter is read for that range and its parts in it. Listed all at
// once, ten million keys were 220 MB at the top of the run's memory; a
// pass holds about passKeys of them.
var passKeys = 1 << 20

// maxPassBits bounds the passes at 1<<maxPassBits: a night's filter has
// at least that many blocks once its passes cut it.
const maxPassBits = 6

// entrySize is the size of an entry of a pass's list: a key hash, then
// the key's index.
const entrySize = 20

// hashBatch is how many keys are hashed together (Tonight.HashKeys).
const hashBatch = 16

// passBitsFor returns how many first bits of a key hash number the
// passes over n keys.
func passBitsFor(n int) int {
	bits := 0
	for bits < maxPassBits && n > passKeys<<bits {
		bits++
	}
	return bits
}

// Reader is tonight's keys meeting earlier nights' memory, as the ledger
// gives it: in passes (Passes, Pass), and in each pass, for each night,
// the range of its filter the pass probes (FilterRange), the parts it
// chooses by it (Parts), and those parts (Add).
type Reader struct {
	tonight Tonight
	met     Met
	seen    Seen
	big     *offheap.Mappings
	// passOf is each key's pass, passCounts how many of each pass each
	// processor's range of keys has; list is the entries of the current
	// pass, sorted by key hash, and unseen those of the unseen records.
	passOf           []uint8
	passCounts       [][]int32
	passBits, pass   int
	list, unseen     []byte
	hashed, prepared bool
}

// NewReader returns a reader of tonight's keys that tells met and seen
// what the earlier nights hold of them; its passing arrays go in big
// (nil: mappings of its own).
func NewReader(tonight Tonight, met Met, seen Seen, big *offheap.Mappings) *Reader {
	if big == nil {
		big = &offheap.Mappings{}
	}
	return &Reader{tonight: tonight, met: met, seen: seen, big: big, pass: -1}
}

// Hash hashes tonight's keys into their passes, once: a run that will
// read earlier nights calls it once the keys it has are tonight's keys.
// The other methods do it when it has not been done.
func (r *Reader) Hash() {
	if r.hashed {
		return
	}
	r.hashed, r.passBits, r.pass = true, passBitsFor(r.tonight.Keys()), -1
	n, passes := r.tonight.Keys(), 1<<r.passBits
	r.passCounts = make([][]int32, work.For(n))
	if passes == 1 {
		// A single pass holds every key, and none is hashed here.
		for w := range r.passCounts {
			lo, hi := work.Share(w, len(r.passCounts), n)
			r.passCounts[w] = []int32{int32(hi - lo)}
		}
		return
	}
	// Every key is hashed twice in all, once here and once in its pass,
	// so that a pass is listed by hashing only its own keys.
	r.passOf = offheap.Slice[uint8](r.big, n, true, false)
	work.Parallel(len(r.passCounts), func(w int) {
		counts := make([]int32, passes)
		lo, hi := work.Share(w, len(r.passCounts), n)
		var idx [hashBatch]int32
		var hs [hashBatch]KeyHash
		for at := lo; at < hi; at += hashBatch {
			k := min(hashBatch, hi-at)
			for j := range k {
				idx[j] = int32(at + j)
			}
			r.tonight.HashKeys(idx[:k], hs[:k])
			for j := range k {
				p := prefix(hs[j][:], r.passBits)
				r.passOf[at+j] = uint8(p)
				counts[p]++
			}
		}
		r.passCounts[w] = counts
	})
}

// Passes returns how many passes tonight's keys meet the memory of
// earlier nights in: 1<<n for n first bits of the key hash, about
// passKeys keys each.
func (r *Reader) Passes() int {
	r.Hash()
	return 1 << r.passBits
}

// Pass lists the keys of pass p (0 ≤ p < Passes) by key hash, letting go
// of the pass before: the filter ranges, parts and blobs given from then
// on are met by those keys. Without it, the first is listed.
func (r *Reader) Pass(p int) {
	r.prepare()
	if p != r.pass {
		r.listPass(p)
	}
}

// prepare hashes tonight's keys into their passes and lists the first,
// and lists the unseen records' keys by hash, once.
func (r *Reader) prepare() {
	if r.prepared {
		return
	}
	r.prepared = true
	r.Hash()
	r.listPass(0)
	hs := r.tonight.Unseen()
	u := make([]byte, len(hs)*entrySize)
	for i, h := range hs {
		copy(u[i*entrySize:], h[:])
		binary.BigEndian.PutUint32(u[i*entrySize+16:], uint32(i))
	}
	r.unseen = sortFixed(u, entrySize)
}

// listPass lists the keys of pass p by key hash, in place of the pass
// listed before: the list is mapped outside the heap and let go of after
// its pass.
func (r *Reader) listPass(p int) {
	offheap.Free(r.big, r.list)
	r.list, r.pass = nil, p
	n, workers := r.tonight.Keys(), len(r.passCounts)
	at := make([]int, workers+1) // where each processor's entries of the pass begin
	for w := range workers {
		at[w+1] = at[w] + int(r.passCounts[w][p])
	}
	list := offheap.Passing(r.big, at[workers]*entrySize)
	work.Parallel(workers, func(w int) {
		lo, hi := work.Share(w, workers, n)
		// Appending to an empty slice of the processor's room writes in place.
		e := list[at[w]*entrySize : at[w]*entrySize]
		var idx [hashBatch]int32
		var hs [hashBatch]KeyHash
		k := 0
		flush := func() {
			r.tonight.HashKeys(idx[:k], hs[:k])
			for j := range k {
				e = binary.BigEndian.AppendUint32(append(e, hs[j][:]...), uint32(idx[j]))
			}
			k = 0
		}
		for i := lo; i < hi; i++ {
			if r.passOf != nil && int(r.passOf[i]) != p {
				continue
			}
			idx[k] = int32(i)
			if k++; k == hashBatch {
				flush()
			}
		}
		flush()
	})
	r.list = sortFixedInto(offheap.Passing(r.big, len(list)), list, entrySize)
	offheap.Free(r.big, list)
}

// Forget lets go of tonight's keys listed by hash: at ten million keys,
// 11 MB of passes and a pass's list. The reader is done with.
func (r *Reader) Forget() {
	offheap.Free(r.big, r.list)
	offheap.Free(r.big, r.passOf)
	r.list, r.unseen, r.passOf, r.passCounts = nil, nil, nil, nil
	r.hashed, r.prepared = false, false
}

// FilterRange returns the bytes [from, to) of an earlier night's filter of
// bits that the current pass probes: the blocks of the pass's range of
// key hashes, or the whole filter of a night with no more blocks than
// there are passes. Bits out of range have none.
func (r *Reader) FilterRange(bits int) (from, to int) {
	r.prepare()
	switch {
	case bits < 0 || bits > maxBits:
		return 0, 0
	case bits <= r.passBits:
		return 0, blockBytes << bits
	}
	shift := bits - r.passBits
	return (r.pass << shift) * blockBytes, ((r.pass + 1) << shift) * blockBytes
}

// Parts returns, in order, the parts of an earlier night's memory (given
// its filter's FilterRange) that may hold a key of the current pass or of
// an unseen record: the only parts Add needs of that night in this pass.
func (r *Reader) Parts(bits int, filter []byte) ([]int, error) {
	from, to := r.FilterRange(bits)
	if bits < 0 || bits > maxBits || len(filter) != to-from {
		return nil, fmt.Errorf("%w: a filter of %d bytes for %d bits", ErrDamaged, len(filter), bits)
	}
	base, pbits := from/blockBytes, PartBits(bits)
	// Tonight's keys are probed in one range per processor: at ten
	// million keys and seven nights, the probes were seconds.
	n := len(r.list) / entrySize
	workers := work.For(n)
	found := make([][]int, workers)
	work.Parallel(workers, func(w int) {
		lo, hi := work.Share(w, workers, n)
		found[w] = mayHoldParts(filter, base, bits, pbits, r.list[lo*entrySize:hi*entrySize])
	})
	parts := slices.Concat(append(found, mayHoldParts(filter, base, bits, pbits, r.unseenInPass()))...)
	slices.Sort(parts)
	return slices.Compact(parts), nil
}

// unseenInPass is the entries of the unseen records in the current pass's
// range of key hashes.
func (r *Reader) unseenInPass() []byte {
	u := r.unseen
	if r.passBits == 0 {
		return u
	}
	n := len(u) / entrySize
	at := func(p int) int {
		return sort.Search(n, func(j int) bool { return prefix(u[j*entrySize:], r.passBits) >= p })
	}
	return u[at(r.pass)*entrySize : at(r.pass+1)*entrySize]
}

// mayHoldParts returns the parts of the filter's night that may hold a
// key hash of list, a pass's entries; filter is the night's blocks from
// block base on.
func mayHoldParts(filter []byte, base, bits, pbits int, list []byte) []int {
	var parts []int
	for j := 0; j < len(list)/entrySize; j++ {
		h := list[j*entrySize : j*entrySize+16]
		if mayHold(filter, base, bits, h) {
			parts = append(parts, prefix(h, pbits))
		}
	}
	return parts
}

// Add takes the memory of an earlier night of date: a blob of its
// records, or the parts of it Parts names, one after another, in order.
// Each record with a key of the current pass is told (Met), and each
// unseen record of the pass it carries (Seen): a night read whole in
// every pass tells each once.
func (r *Reader) Add(date time.Time, blob []byte) error {
	if len(blob)%RecordSize != 0 {
		return fmt.Errorf("%w: %d bytes", ErrDamaged, len(blob))
	}
	r.prepare()
	merge(blob, r.list, func(rec []byte, i int32) { r.met(i, date, record(rec)) })
	merge(blob, r.unseenInPass(), func(_ []byte, i int32) { r.seen(i) })
	return nil
}

// merge calls fn for each record of blob and each entry of list (a key
// hash and an index) with the record's key hash. Both are sorted by key
// hash; the walk starts at the first entry the blob can match, as a blob
// may be one small part of a night.
func merge(blob, list []byte, fn func(rec []byte, index int32)) {
	n, entries := len(blob)/RecordSize, len(list)/entrySize
	if n == 0 || entries == 0 {
		return
	}
	key := func(j int) []byte { return list[j*entrySize : j*entrySize+16] }
	j := sort.Search(entries, func(j int) bool { return bytes.Compare(key(j), blob[:16]) >= 0 })
	for i := 0; i < n && j < entries; {
		rec := blob[i*RecordSize : (i+1)*RecordSize]
		switch c := bytes.Compare(rec[:16], key(j)); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			for k := j; k < entries && bytes.Equal(key(k), rec[:16]); k++ {
				fn(rec, int32(binary.BigEndian.Uint32(list[k*entrySize+16:])))
			}
			i++
		}
	}
}
