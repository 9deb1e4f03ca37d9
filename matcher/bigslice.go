package matcher

import "unsafe"

// The index's large arrays are allocated outside the Go heap on Linux:
// they hold no Go pointers, so the collector has nothing to find in them,
// and the heap it paces itself by stays small, which at ten million rows
// keeps about a gigabyte of garbage from piling up beside them. The hash
// table, probed at random once per row, is asked to be backed by 2 MiB
// pages: with 4 KiB pages nearly every probe of a table of a hundred
// megabytes and more also misses the TLB. The other arrays are read and
// written in order and do without (the kernel's work to find huge pages
// for them cost more than it saved).

// bigThreshold is the size below which an array is an ordinary Go slice:
// small indexes (tests, small files) gain nothing from huge pages.
const bigThreshold = 32 << 20

// mappings are the arrays a matcher allocated outside the heap, returned
// to the system together by release.
type mappings struct{ regions [][]byte }

// bigSlice returns a zeroed slice of n values of T, whose type must hold
// no pointers, with length 0 and capacity n (or length n when full), in
// huge pages if huge is set and the system has them.
func bigSlice[T any](ms *mappings, n int, full, huge bool) []T {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	var s []T
	if b := ms.alloc(size, huge); b != nil {
		s = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
	} else {
		s = make([]T, n)
	}
	if full {
		return s
	}
	return s[:0]
}

func (ms *mappings) alloc(size int, huge bool) []byte {
	if size < bigThreshold {
		return nil
	}
	b := mapMemory(size, huge)
	if b != nil {
		ms.regions = append(ms.regions, b)
	}
	return b
}

// passingBytes returns n zeroed bytes for an array let go of (freeBig)
// as soon as it has served, outside the heap from passingThreshold on: on
// the heap it would stay as garbage until the next collection, and the
// collector would pace itself by it.
func passingBytes(ms *mappings, n int) []byte {
	if n >= passingThreshold {
		if b := mapMemory(n, false); b != nil {
			ms.regions = append(ms.regions, b)
			return b
		}
	}
	return make([]byte, n)
}

const passingThreshold = 1 << 20

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
			unmapMemory(b)
			ms.regions = append(ms.regions[:i], ms.regions[i+1:]...)
			return
		}
	}
}

// release unmaps every array. Nothing may refer to them afterwards.
func (ms *mappings) release() {
	for _, b := range ms.regions {
		unmapMemory(b)
	}
	ms.regions = nil
}
