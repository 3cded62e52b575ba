//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package index

// mapBuckets maps nothing on this system: every table is on the Go heap.
func mapBuckets(int) ([]byte, bool) { return nil, false }

func unmapBuckets([]byte) {}
