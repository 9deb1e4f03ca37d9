//go:build !linux

package matcher

func mapHuge(size int) []byte { return nil }

func unmapHuge(b []byte) {}
