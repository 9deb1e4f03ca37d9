//go:build !linux

package offheap

func mapMemory(size int, huge bool) []byte { return nil }

func unmapMemory(b []byte) {}
