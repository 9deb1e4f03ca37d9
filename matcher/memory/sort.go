package memory

import (
	"encoding/binary"
	"runtime"

	"reconcile/matcher/internal/work"
)

// sortRecords sorts the records by key hash. The hashes are uniform, so
// one pass that scatters the records into about n/4 buckets by their
// leading bits leaves a handful of records in each, finished by insertion
// sort: linear time, where a comparison sort of millions of 40-byte records
// is the slowest step of writing the memory. Each processor scatters its
// own range of records into its own places in the buckets, then sorts its
// own range of buckets.
func sortRecords(out []byte) []byte { return sortFixed(out, RecordSize) }

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
	work.Parallel(workers, func(w int) {
		counts := make([]int32, buckets)
		lo, hi := work.Share(w, workers, n)
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

	work.Parallel(workers, func(w int) {
		lo, hi := work.Share(w, workers, n)
		for i := lo; i < hi; i++ {
			b := bucket(i)
			copy(sorted[int(next[w][b])*recordSize:], out[i*recordSize:(i+1)*recordSize])
			next[w][b]++
		}
	})
	work.Parallel(workers, func(w int) {
		tmp := make([]byte, recordSize)
		blo, bhi := work.Share(w, workers, buckets)
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
