//go:build !linux

package store

// dropPages does nothing where madvise is not used: the kernel reclaims the
// map's clean pages under memory pressure by itself.
func dropPages(addr uintptr, size int64) error { return nil }
