package matcher

import "syscall"

// mapHuge maps size bytes of zeroed anonymous memory and asks for huge
// pages; it returns nil when the system refuses, and the caller then uses
// the Go heap.
func mapHuge(size int) []byte {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	// Advice only: without transparent huge pages the memory still works.
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b
}

func unmapHuge(b []byte) { _ = syscall.Munmap(b) }
