package memory

import (
	"encoding/binary"

	"reconcile"
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

// layOut cuts a sorted blob of records into its parts and makes its
// filter.
func layOut(blob []byte) reconcile.NightMemory {
	n := len(blob) / RecordSize
	l := reconcile.NightMemory{Bits: blockBits(n)}
	l.Filter = make([]byte, blockBytes<<l.Bits)
	pbits := PartBits(l.Bits)
	for i := 0; i < n; {
		p := prefix(blob[i*RecordSize:], pbits)
		j := i
		for ; j < n && prefix(blob[j*RecordSize:], pbits) == p; j++ {
			h := blob[j*RecordSize:]
			block := l.Filter[prefix(h, l.Bits)*blockBytes:]
			for _, b := range probes(h) {
				block[b>>3] |= 1 << (b & 7)
			}
		}
		l.Parts = append(l.Parts, reconcile.MemoryPart{Index: p, Rows: j - i, Records: blob[i*RecordSize : j*RecordSize : j*RecordSize]})
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
