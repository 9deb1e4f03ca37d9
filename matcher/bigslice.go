package matcher

import "unsafe"

// The index's large arrays (the hash table above all, probed at random
// once per row) are allocated outside the Go heap on Linux, in memory the
// kernel is asked to back with 2 MiB pages: with 4 KiB pages nearly every
// probe of a table of hundreds of megabytes also misses the TLB, which at
// ten million rows costs more than the parsing. The arrays hold no Go
// pointers, so the garbage collector has nothing to find in them.

// bigThreshold is the size below which an array is an ordinary Go slice:
// small indexes (tests, small files) gain nothing from huge pages.
const bigThreshold = 32 << 20

// mappings are the arrays a matcher allocated outside the heap, returned
// to the system together by release.
type mappings struct{ regions [][]byte }

// bigSlice returns a zeroed slice of n values of T, whose type must hold
// no pointers, with length 0 and capacity n (or length n when full).
func bigSlice[T any](ms *mappings, n int, full bool) []T {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	var s []T
	if b := ms.alloc(size); b != nil {
		s = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
	} else {
		s = make([]T, n)
	}
	if full {
		return s
	}
	return s[:0]
}

func (ms *mappings) alloc(size int) []byte {
	if size < bigThreshold {
		return nil
	}
	b := mapHuge(size)
	if b != nil {
		ms.regions = append(ms.regions, b)
	}
	return b
}

// freeBig unmaps the array s was allocated in, if it still is in it (an
// append past its capacity moved it to the heap; the region then waits for
// release). Nothing may refer to the array afterwards.
func freeBig[T any](ms *mappings, s []T) {
	if cap(s) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(s[:1]))
	for i, b := range ms.regions {
		if unsafe.Pointer(unsafe.SliceData(b)) == p {
			unmapHuge(b)
			ms.regions = append(ms.regions[:i], ms.regions[i+1:]...)
			return
		}
	}
}

// release unmaps every array. Nothing may refer to them afterwards.
func (ms *mappings) release() {
	for _, b := range ms.regions {
		unmapHuge(b)
	}
	ms.regions = nil
}
