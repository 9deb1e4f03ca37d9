package matcher

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
)

// A night's memory is stored in parts by key hash, with a filter that says
// which parts can hold a key. The filter is a Bloom filter cut in blocks
// of 1,024 bits, one block for about 64 records, the block of a record
// chosen by the first bits of its key hash; a part holds the records of 16
// blocks. Tonight's keys, sorted by hash, walk the filter of an earlier
// night in order, and only the parts where one of them may be are read:
// for a night of ten million rows, its filter (about 2 bytes a row, read
// whole) and a few hundred parts, instead of 440 MB of records.
//
// A key's 128-bit hash is uniform in every bit, so it serves the filter
// as it is: the first bits choose the block, 80 of the others the 8 bits
// it sets there. The number of blocks is a power of two, so a block
// describes 32 to 64 records on average, and the filter answers yes for a
// key that is not there once in 175,000 to once in 1,800 keys (once in
// 27,000 at ten million rows, 42 records a block).

const (
	blockMean   = 64   // records a filter block describes, at most, on average
	blockBytes  = 128  // 1,024 bits a block
	blockProbes = 8    // bits a key sets in its block
	partShift   = 4    // a part holds the records of 1<<partShift blocks
	maxBits     = 40   // blocks are numbered by at most the first 40 bits
	blockMask   = 1023 // a bit of a block
)

// Layout is a night's memory as it is stored: its parts, and its filter.
type Layout struct {
	Bits   int    // filter blocks are numbered by the first Bits bits of the key hash
	Parts  []Part // the parts that hold records, in order
	Filter []byte // blockBytes for each of the 1<<Bits blocks
}

// Part is the records of a night whose key hashes begin with Index, in
// PartBits(Bits) bits.
type Part struct {
	Index   int
	Records []byte
}

// PartBits is how many first bits of a key hash number the parts of a
// night whose filter blocks take bits.
func PartBits(bits int) int { return max(0, bits-partShift) }

func blockBits(n int) int {
	bits := 0
	for bits < maxBits && n > blockMean<<bits {
		bits++
	}
	return bits
}

// prefix returns the first bits bits of a key hash.
func prefix(h []byte, bits int) int {
	if bits == 0 {
		return 0
	}
	return int(binary.BigEndian.Uint64(h) >> (64 - bits))
}

// probes returns the bits of its block a key hash sets: 60 bits of the
// hash's second half and the last 20 of its first, which the block number
// (at most its first 40) leaves alone.
func probes(h []byte) [blockProbes]uint16 {
	hi, lo := binary.BigEndian.Uint64(h), binary.BigEndian.Uint64(h[8:])
	var p [blockProbes]uint16
	for i := 0; i < 6; i++ {
		p[i] = uint16(lo >> (10 * i) & blockMask)
	}
	p[6], p[7] = uint16(hi&blockMask), uint16(hi>>10&blockMask)
	return p
}

// LayOut cuts a sorted memory blob (Memory) into its parts
// and makes its filter.
func LayOut(blob []byte) Layout {
	n := len(blob) / recordSize
	l := Layout{Bits: blockBits(n)}
	l.Filter = make([]byte, blockBytes<<l.Bits)
	pbits := PartBits(l.Bits)
	for i := 0; i < n; {
		p := prefix(blob[i*recordSize:], pbits)
		j := i
		for ; j < n && prefix(blob[j*recordSize:], pbits) == p; j++ {
			h := blob[j*recordSize:]
			block := l.Filter[prefix(h, l.Bits)*blockBytes:]
			for _, b := range probes(h) {
				block[b>>3] |= 1 << (b & 7)
			}
		}
		l.Parts = append(l.Parts, Part{Index: p, Records: blob[i*recordSize : j*recordSize : j*recordSize]})
		i = j
	}
	return l
}

// mayHold reports whether the filter may hold the key hash h: filter is
// the blocks of a night's filter from block base on.
func mayHold(filter []byte, base, bits int, h []byte) bool {
	block := filter[(prefix(h, bits)-base)*blockBytes:]
	for _, b := range probes(h) {
		if block[b>>3]&(1<<(b&7)) == 0 {
			return false
		}
	}
	return true
}

// FilterRange returns the bytes [from, to) of an earlier night's filter of
// bits that the current pass (MemoryPass) probes: the blocks of the pass's
// range of key hashes, or the whole filter of a night with no more blocks
// than there are passes. Bits out of range have none.
func (m *Matcher) FilterRange(bits int) (from, to int) {
	m.flush()
	m.prepareMemory()
	switch {
	case bits < 0 || bits > maxBits:
		return 0, 0
	case bits <= m.passBits:
		return 0, blockBytes << bits
	}
	shift := bits - m.passBits
	return (m.pass << shift) * blockBytes, ((m.pass + 1) << shift) * blockBytes
}

// MemoryParts returns, in order, the parts of an earlier night's memory
// (given its filter's FilterRange) that may hold a key of the current pass
// of tonight's file or of a local record missing from it: the only parts
// AddMemory needs of that night in this pass. Call it after AddRow and
// AddLocalRow.
func (m *Matcher) MemoryParts(bits int, filter []byte) ([]int, error) {
	from, to := m.FilterRange(bits)
	if bits < 0 || bits > maxBits || len(filter) != to-from {
		return nil, fmt.Errorf("%w: a filter of %d bytes for %d bits", ErrMemory, len(filter), bits)
	}
	base, pbits := from/blockBytes, PartBits(bits)
	// Tonight's keys are probed in one range per processor: at ten
	// million keys and seven nights, the probes were seconds.
	n := len(m.sorted) / sortedSize
	workers := workersFor(n)
	found := make([][]int, workers)
	parallel(workers, func(w int) {
		lo, hi := share(w, workers, n)
		found[w] = mayHoldParts(filter, base, bits, pbits, m.sorted[lo*sortedSize:hi*sortedSize])
	})
	parts := slices.Concat(append(found, mayHoldParts(filter, base, bits, pbits, m.unseenInPass()))...)
	slices.Sort(parts)
	return slices.Compact(parts), nil
}

// unseenInPass is the entries of unseenSorted in the current pass's range
// of key hashes.
func (m *Matcher) unseenInPass() []byte {
	u := m.unseenSorted
	if m.passBits == 0 {
		return u
	}
	n := len(u) / sortedSize
	at := func(p int) int {
		return sort.Search(n, func(j int) bool { return prefix(u[j*sortedSize:], m.passBits) >= p })
	}
	return u[at(m.pass)*sortedSize : at(m.pass+1)*sortedSize]
}

// mayHoldParts returns the parts of the filter's night that may hold a
// key hash of sorted, a list of Matcher.sorted's entries; filter is the
// night's blocks from block base on.
func mayHoldParts(filter []byte, base, bits, pbits int, sorted []byte) []int {
	var parts []int
	for j := 0; j < len(sorted)/sortedSize; j++ {
		h := sorted[j*sortedSize : j*sortedSize+16]
		if mayHold(filter, base, bits, h) {
			parts = append(parts, prefix(h, pbits))
		}
	}
	return parts
}
