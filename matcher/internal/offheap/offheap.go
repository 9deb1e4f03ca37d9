// Package offheap allocates the matcher's large arrays outside the Go
// heap on Linux: they hold no Go pointers, so the collector has nothing to
// find in them, and the heap it paces itself by stays small, which at ten
// million rows keeps about a gigabyte of garbage from piling up beside
// them. The hash table, probed at random once per row, is asked to be
// backed by 2 MiB pages: with 4 KiB pages nearly every probe of a table of
// a hundred megabytes and more also misses the TLB. The other arrays are
// read and written in order and do without (the kernel's work to find huge
// pages for them cost more than it saved).
//
// It is the allocator of the row store and of the nights' memory: what
// they allocate here, they give back (Free, Release); nothing else may
// refer to an array once it is given back.
package offheap

import "unsafe"

// Threshold is the size below which an array is an ordinary Go slice:
// small indexes (tests, small files) gain nothing from huge pages.
const Threshold = 32 << 20

// passingThreshold is the size from which an array that serves only a
// moment (Passing) is mapped.
const passingThreshold = 1 << 20

// Mappings are the arrays allocated outside the heap, returned to the
// system together by Release.
type Mappings struct{ regions [][]byte }

// Mapped reports how many arrays are mapped.
func (ms *Mappings) Mapped() int { return len(ms.regions) }

// Slice returns a zeroed slice of n values of T, whose type must hold no
// pointers, with length 0 and capacity n (or length n when full), in huge
// pages if huge is set and the system has them.
func Slice[T any](ms *Mappings, n int, full, huge bool) []T {
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

func (ms *Mappings) alloc(size int, huge bool) []byte {
	if size < Threshold {
		return nil
	}
	b := mapMemory(size, huge)
	if b != nil {
		ms.regions = append(ms.regions, b)
	}
	return b
}

// Passing returns n zeroed bytes for an array let go of (Free) as soon as
// it has served, outside the heap from a megabyte on: on the heap it would
// stay as garbage until the next collection, and the collector would pace
// itself by it.
func Passing(ms *Mappings, n int) []byte {
	if n >= passingThreshold {
		if b := mapMemory(n, false); b != nil {
			ms.regions = append(ms.regions, b)
			return b
		}
	}
	return make([]byte, n)
}

// Free unmaps the array s was allocated in, if it still is in it (an
// append past its capacity moved it to the heap; the region then waits for
// Release). Nothing may refer to the array afterwards.
func Free[T any](ms *Mappings, s []T) {
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

// Release unmaps every array. Nothing may refer to them afterwards.
func (ms *Mappings) Release() {
	for _, b := range ms.regions {
		unmapMemory(b)
	}
	ms.regions = nil
}
