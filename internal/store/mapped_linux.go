//go:build linux

package store

import "syscall"

// dropPages tells the kernel the process no longer needs the mapped pages
// of [addr, addr+size): for a shared, read-only file map they leave the
// resident set and stay in the page cache.
func dropPages(addr uintptr, size int64) error {
	if size <= 0 {
		return nil
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, uintptr(size), syscall.MADV_DONTNEED); errno != 0 {
		return errno
	}
	return nil
}
