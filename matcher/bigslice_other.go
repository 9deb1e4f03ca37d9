//go:build !linux

package matcher

func mapMemory(size int, huge bool) []byte { return nil }

func unmapMemory(b []byte) {}
