//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package index

import "syscall"

// mapBuckets maps size bytes of zeroed memory, private to the process.
func mapBuckets(size int) ([]byte, bool) {
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	return mem, err == nil
}

// unmapBuckets unmaps what mapBuckets mapped. It cannot fail on a
// mapping of its own: the range is one it was given whole.
func unmapBuckets(mem []byte) { syscall.Munmap(mem) }
