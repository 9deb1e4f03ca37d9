package offheap

import "syscall"

// mapMemory maps size bytes of zeroed anonymous memory, asking for huge
// pages when huge is set; it returns nil when the system refuses, and the
// caller then uses the Go heap.
func mapMemory(size int, huge bool) []byte {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	// Advice only: without transparent huge pages the memory still works.
	if huge {
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	}
	return b
}

func unmapMemory(b []byte) { _ = syscall.Munmap(b) }
