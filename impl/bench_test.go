package impl_test

import (
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// The runtime's hot path is held against a plain Go map insert and delete,
// the least a runtime that keeps its books in a map would pay; run them
// together (go test -bench . ./impl) and compare ns/op. The aim is at most
// twice the baseline, with no allocation per op.

// BenchmarkMapInsertDelete is the baseline.
func BenchmarkMapInsertDelete(b *testing.B) {
	m := make(map[traces.Addr]int)
	b.ReportAllocs()
	for i := range b.N {
		a := traces.Addr(i) << 4
		m[a] = 1
		delete(m, a)
	}
}

// BenchmarkAllocRelease makes a tensor in a scope and releases it: under
// LIFO reuse every alloc lands on the block just freed and purges the
// record the dead tensor left.
func BenchmarkAllocRelease(b *testing.B) {
	rt := impl.New(impl.Config{})
	_ = rt.ScopeEnter()
	b.ReportAllocs()
	for range b.N {
		a, _ := rt.Alloc(64)
		_ = rt.Release(a)
	}
}

// BenchmarkAcquireRelease moves the count of a live tensor up and down.
func BenchmarkAcquireRelease(b *testing.B) {
	rt := impl.New(impl.Config{})
	_ = rt.ScopeEnter()
	a, _ := rt.Alloc(64)
	b.ReportAllocs()
	for range b.N {
		_ = rt.Acquire(a)
		_ = rt.Release(a)
	}
}
