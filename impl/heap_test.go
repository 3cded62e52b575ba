package impl

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

func TestClassOf(t *testing.T) {
	cases := []struct {
		size uint64
		want int
	}{
		{1, 0}, {16, 0}, {17, 1}, {32, 1}, {33, 2}, {64, 2}, {65, 3},
		{1 << 20, 16}, {MaxSize, numClasses - 1},
	}
	for _, c := range cases {
		if got := classOf(c.size); got != c.want {
			t.Errorf("classOf(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

// TestAddresses checks the address layout: non-NULL, 16-byte aligned,
// disjoint ranges, and lookup finding exactly the blocks handed out.
func TestAddresses(t *testing.T) {
	h := newHeap(ReuseLIFO, 0)
	type span struct{ lo, hi traces.Addr }
	var spans []span
	for _, size := range []uint64{1, 16, 17, 48, 64, 1000, 1 << 20, MaxSize} {
		for range 3 {
			a, b, err := h.malloc(size)
			if err != nil {
				t.Fatalf("malloc(%d): %v", size, err)
			}
			if a == 0 || a%16 != 0 {
				t.Fatalf("malloc(%d) = %v: not a non-NULL 16-byte aligned address", size, a)
			}
			if h.lookup(a) != b {
				t.Fatalf("lookup(%v) does not find the block malloc(%d) handed out", a, size)
			}
			for _, s := range spans {
				if a < s.hi && s.lo < a+traces.Addr(size) {
					t.Fatalf("malloc(%d) = %v overlaps [%v, %v)", size, a, s.lo, s.hi)
				}
			}
			spans = append(spans, span{a, a + traces.Addr(size)})
		}
	}
	for _, a := range []traces.Addr{0, 0x10, 0x1000, heapBase - 16, heapBase + 8, heapBase + 100*16, 1<<63 + 1} {
		if h.lookup(a) != nil {
			t.Errorf("lookup(%v) found a block the heap never handed out", a)
		}
	}
	if _, _, err := h.malloc(MaxSize + 1); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("malloc(MaxSize+1) = %v, want ErrOutOfMemory", err)
	}
}

// TestReuseOrder frees three blocks of a class and checks the order in
// which each policy hands them back.
func TestReuseOrder(t *testing.T) {
	cases := []struct {
		name       string
		reuse      Reuse
		quarantine int
		want       []int // for each later malloc: the index of the freed block, or -1 for a fresh one
	}{
		{"lifo", ReuseLIFO, 0, []int{2, 1, 0, -1}},
		{"fifo", ReuseFIFO, 1, []int{0, 1, -1}},
		{"fifo default quarantine", ReuseFIFO, 0, []int{-1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHeap(c.reuse, c.quarantine)
			var freed []traces.Addr
			for range 3 {
				a, _, _ := h.malloc(64)
				freed = append(freed, a)
			}
			for _, a := range freed {
				h.free(a, h.lookup(a))
			}
			for i, want := range c.want {
				a, _, _ := h.malloc(64)
				got := -1
				for j, f := range freed {
					if f == a {
						got = j
					}
				}
				if got != want {
					t.Fatalf("malloc %d after the frees got block %d (%v), want %d", i, got, a, want)
				}
			}
		})
	}
}

// TestFIFOQuarantine checks that a freed block waits for Quarantine later
// frees of its class before it is reused.
func TestFIFOQuarantine(t *testing.T) {
	const q = 3
	h := newHeap(ReuseFIFO, q)
	var addrs []traces.Addr
	for range q + 1 {
		a, _, _ := h.malloc(16)
		addrs = append(addrs, a)
	}
	seen := map[traces.Addr]bool{}
	for _, a := range addrs[:q] {
		h.free(a, h.lookup(a))
		seen[a] = true
	}
	if a, _, _ := h.malloc(16); seen[a] {
		t.Fatalf("block %v reused with only %d blocks in quarantine", a, q)
	}
	h.free(addrs[q], h.lookup(addrs[q]))
	if a, _, _ := h.malloc(16); a != addrs[0] {
		t.Fatalf("got %v, want the oldest freed block %v", a, addrs[0])
	}
}

// TestPurgeKeepsScopesSmall checks that a loop allocating and releasing in
// one scope does not pile up stale records.
func TestPurgeKeepsScopesSmall(t *testing.T) {
	r := New(Config{})
	_ = r.ScopeEnter()
	for range 1000 {
		a, _ := r.Alloc(64)
		_ = r.Release(a)
	}
	if n := len(r.scopes[0]); n != 1 {
		t.Fatalf("scope holds %d records after 1000 alloc/release pairs, want 1", n)
	}
	r = New(Config{Faults: []Fault{FaultStaleRecordNotPurged}})
	_ = r.ScopeEnter()
	for range 10 {
		a, _ := r.Alloc(64)
		_ = r.Release(a)
	}
	if n := len(r.scopes[0]); n != 10 {
		t.Fatalf("with the fault on, the scope holds %d records, want 10", n)
	}
}

// TestFaultBits holds the fault bits in catalog order.
func TestFaultBits(t *testing.T) {
	bits := map[Fault]faultSet{
		FaultStaleRecordNotPurged:               fStaleRecordNotPurged,
		FaultScopeExitReleasesDead:              fScopeExitReleasesDead,
		FaultUnregisterReleases:                 fUnregisterReleases,
		FaultUnregisterOldestRecord:             fUnregisterOldestRecord,
		FaultStructUnregisterDeep:               fStructUnregisterDeep,
		FaultStructUnregisterNone:               fStructUnregisterNone,
		FaultStructInitNoAcquire:                fStructInitNoAcquire,
		FaultStructDeathNoFieldRelease:          fStructDeathNoFieldRelease,
		FaultStructDeathFieldsOnly:              fStructDeathFieldsOnly,
		FaultRegisterDuplicatesRecord:           fRegisterDuplicatesRecord,
		FaultRegisterCountsNoRecord:             fRegisterCountsNoRecord,
		FaultParamRegisterNoAcquire:             fParamRegisterNoAcquire,
		FaultParamReregisterNoRelease:           fParamReregisterNoRelease,
		FaultParamReregisterReleaseFirst:        fParamReregisterReleaseFirst,
		FaultReleaseIgnoresZero:                 fReleaseIgnoresZero,
		FaultZSTAllocates:                       fZSTAllocates,
		FaultHeapDoubleHandout:                  fHeapDoubleHandout,
		FaultScopeExitOldestFirst:               fScopeExitOldestFirst,
		FaultArenaGrowFreesOld:                  fArenaGrowFreesOld,
		FaultPlannerSharesOverlapping:           fPlannerSharesOverlapping,
		FaultMethodWithoutFrame:                 fMethodWithoutFrame,
		FaultRegistryCountOutsideLock:           fRegistryCountOutsideLock,
		FaultRegistryAliasUnderflow:             fRegistryAliasUnderflow,
		FaultPoolDuplicateFreeEntry:             fPoolDuplicateFreeEntry,
		FaultPoolKeyNeverMatches:                fPoolKeyNeverMatches,
		FaultPoolSplitRemainderLost:             fPoolSplitRemainderLost,
		FaultPoolFreeNoMerge:                    fPoolFreeNoMerge,
		FaultPoolStatsDrift:                     fPoolStatsDrift,
		FaultReturnCleansInnermost:              fReturnCleansInnermost,
		FaultBreakInIfSkipsCleanup:              fBreakInIfSkipsCleanup,
		FaultBlockResultFreed:                   fBlockResultFreed,
		FaultCallerNoRegister:                   fCallerNoRegister,
		FaultCalleeReleasesBorrowed:             fCalleeReleasesBorrowed,
		FaultRegisterTwice:                      fRegisterTwice,
		FaultMoveStillReleased:                  fMoveStillReleased,
		FaultEmitRetainOverRetains:              fEmitRetainOverRetains,
		FaultAutogradStructRetain:               fAutogradStructRetain,
		FaultAutogradNoGradClearing:             fAutogradNoGradClearing,
		FaultAutogradScopeFreesGraph:            fAutogradScopeFreesGraph,
		FaultAutogradBackwardKeepsIntermediates: fAutogradBackwardKeepsIntermediates,
		FaultAutogradDetachKeepsGraph:           fAutogradDetachKeepsGraph,
		FaultAutogradSavedNeverReleased:         fAutogradSavedNeverReleased,
		FaultAutogradViewOwnVersion:             fAutogradViewOwnVersion,
		FaultAutogradDoubleBump:                 fAutogradDoubleBump,
		FaultAutogradSnapshotTableNeverCleared:  fAutogradSnapshotTableNeverCleared,
		FaultAutogradRestoreWrongVersion:        fAutogradRestoreWrongVersion,
		FaultSretSourceKept:                     fSretSourceKept,
		FaultAutogradSnapshotShallow:            fAutogradSnapshotShallow,
		FaultLoopLifeEndsFirstLoop:              fLoopLifeEndsFirstLoop,
	}
	if len(bits) != len(catalog) {
		t.Fatalf("%d fault bits for %d catalog entries", len(bits), len(catalog))
	}
	for i, f := range catalog {
		if faultSet(1)<<i != bits[f.Name] {
			t.Errorf("fault %s: catalog index %d, bit %b", f.Name, i, bits[f.Name])
		}
		got, err := parseFaults([]Fault{f.Name})
		if e := f.info().Engine; !runtimeCarries(e) {
			// Another engine's fault: Runtime's Config refuses it, by name.
			// (A codegen or autograd fault is Runtime's to have: the
			// lowering and the autograd engine ask it.)
			if err == nil || !strings.Contains(err.Error(), string(f.Name)) {
				t.Errorf("fault %s of engine %s: parseFaults = %b, %v; want an error naming it", f.Name, f.info().Engine, got, err)
			}
			continue
		}
		if err != nil || got != bits[f.Name] {
			t.Errorf("fault %s: bit %b (%v), want %b", f.Name, got, err, bits[f.Name])
		}
	}
	if n := len(catalog); n > 64 {
		t.Errorf("%d faults do not fit the 64 bits of a faultSet", n)
	}
}
