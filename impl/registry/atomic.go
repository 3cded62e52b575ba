package registry

import "sync/atomic"

// The count is a plain int64 written under a lock; only the fault
// registry-count-outside-lock touches it without one, and it does so
// atomically so that the race detector leaves the lost update to the
// linearizability check. Correct paths never mix with it in one run.
func atomicLoad(p *int64) int64     { return atomic.LoadInt64(p) }
func atomicStore(p *int64, v int64) { atomic.StoreInt64(p, v) }
