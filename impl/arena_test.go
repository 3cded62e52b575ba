package impl_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// TestArena runs the frame calls through their cases, the well-formed ones
// and every misuse, checking the errors (inline in the script), the trace
// (arena addresses written as the variable each buffer was made for) and
// the open frames after the last call.
func TestArena(t *testing.T) {
	cases := []struct {
		name   string
		s      script
		trace  string
		frames []int
	}{
		{"a slot's buffer again for a size it holds",
			script{"fn 1", "x=get 0 32", "y=get 0 16", "z=get 0 32", "fnexit"},
			"fn_enter 1; arena_get 0 32 x@x; arena_get 0 16 y@x; arena_get 0 32 z@x; fn_exit", nil},
		{"a slot grows into a new buffer; the old one is not reused in the frame",
			script{"fn 2", "x=get 0 16", "y=get 0 64", "z=get 1 16", "w=get 1 80", "fnexit"},
			"fn_enter 2; arena_get 0 16 x@x; arena_get 0 64 y@y; arena_get 1 16 z@z; arena_get 1 80 w@w; fn_exit", nil},
		{"slots hold distinct buffers",
			script{"fn 3", "x=get 0 16", "y=get 1 16", "z=get 2 16", "fnexit"},
			"fn_enter 3; arena_get 0 16 x@x; arena_get 1 16 y@y; arena_get 2 16 z@z; fn_exit", nil},
		{"fn_exit gives the frame's memory to the next frame",
			script{"fn 1", "x=get 0 16", "fnexit", "fn 1", "y=get 0 16", "fnexit"},
			"fn_enter 1; arena_get 0 16 x@x; fn_exit; fn_enter 1; arena_get 0 16 y@x; fn_exit", nil},
		{"a nested frame's buffers come after its caller's and go with it",
			script{"fn 1", "x=get 0 16", "fn 1", "y=get 0 16", "fnexit", "z=get 0 32", "fnexit"},
			"fn_enter 1; arena_get 0 16 x@x; fn_enter 1; arena_get 0 16 y@y; fn_exit; arena_get 0 32 z@y; fn_exit", nil},
		{"a buffer larger than a chunk gets a chunk of its own",
			script{"fn 2", "x=get 0 16", "y=get 1 100000", "z=get 0 70000", "fnexit"},
			"fn_enter 2; arena_get 0 16 x@x; arena_get 1 100000 y@y; arena_get 0 70000 z@z; fn_exit", nil},
		{"size 0 is NULL and leaves the slot as it was",
			script{"fn 1", "x=get 0 16", "n=get 0 0", "y=get 0 16", "fnexit"},
			"fn_enter 1; arena_get 0 16 x@x; arena_get 0 0 n@null; arena_get 0 16 y@x; fn_exit", nil},
		{"a method has a frame like a function",
			script{"fn 1", "x=get 0 16", "method 1", "y=get 0 16", "fnexit", "read x", "fnexit"},
			"fn_enter 1; arena_get 0 16 x@x; fn_enter 1; arena_get 0 16 y@y; fn_exit; read x@x; fn_exit", nil},
		{"reads and writes are recorded with their variable",
			script{"fn 1", "x=get 0 16", "write x", "read x", "fnexit"},
			"fn_enter 1; arena_get 0 16 x@x; write x@x; read x@x; fn_exit", nil},
		{"the planner's frame",
			script{"plan 0-1 1-2 2-2", "a=get @0 16", "b=get @1 16", "c=get @2 16", "read a", "fnexit"},
			"fn_enter 2; arena_get 0 16 a@a; arena_get 1 16 b@b; arena_get 0 16 c@a; read a@a; fn_exit", nil},
		{"a huge frame costs only the slots asked for",
			script{"fn 2000000000", "x=get 1999999999 16", "y=get 5000 16", "z=get 1999999999 16", "fnexit"},
			"fn_enter 2000000000; arena_get 1999999999 16 x@x; arena_get 5000 16 y@y; arena_get 1999999999 16 z@x; fn_exit", nil},
		{"frames left open",
			script{"fn 2", "fn 0"},
			"fn_enter 2; fn_enter 0", []int{2, 0}},

		// misuse
		{"arena_get with no frame",
			script{"x=get 0 16 !misuse"},
			"arena_get 0 16 x@null", nil},
		{"fn_exit with no frame",
			script{"fnexit !misuse"},
			"fn_exit", nil},
		{"a slot out of range",
			script{"fn 2", "x=get 2 16 !misuse", "fnexit"},
			"fn_enter 2; arena_get 2 16 x@null; fn_exit", nil},
		{"a frame of no slots",
			script{"fn 0", "x=get 0 16 !misuse", "fnexit"},
			"fn_enter 0; arena_get 0 16 x@null; fn_exit", nil},
		{"end with a frame open",
			script{"fn 1", "end !misuse"},
			"fn_enter 1; end", []int{1}},
		{"end with a scope and a frame open",
			script{"enter", "fn 1", "end !misuse,misuse"},
			"scope_enter; fn_enter 1; end", []int{1}},
		{"a read of NULL",
			script{"fn 1", "x=get 0 0", "read x !invalid-address", "fnexit"},
			"fn_enter 1; arena_get 0 0 x@null; read x@null; fn_exit", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := execute(t, impl.Config{}, true, c.s)
			if got := r.Trace(); got != c.trace {
				t.Errorf("trace:\n got %s\nwant %s", got, c.trace)
			}
			if got := r.rt.Frames(); !slices.Equal(got, c.frames) && len(got)+len(c.frames) > 0 {
				t.Errorf("frames %v, want %v", got, c.frames)
			}
		})
	}
}

// TestArenaAddresses holds the arena's addresses apart from the heap's:
// 16-byte aligned, non-NULL, not ZSTAddr, below every heap block, and the
// live buffers of open frames never overlapping.
func TestArenaAddresses(t *testing.T) {
	var rec impl.Recording
	rt := impl.New(impl.Config{Record: rec.Record})
	_ = rt.ScopeEnter()
	heapLo, _ := rt.Alloc(16)
	type buf struct{ lo, hi traces.Addr }
	var live []buf
	sizes := []uint64{16, 1, 48, 64 << 10, 200 << 10, 17, 32}
	for depth := range 3 {
		if err := rt.FnEnter(len(sizes)); err != nil {
			t.Fatal(err)
		}
		for slot, size := range sizes {
			a, err := rt.ArenaGet(slot, size*uint64(depth+1), "")
			if err != nil {
				t.Fatal(err)
			}
			if a == 0 || a == impl.ZSTAddr || a%16 != 0 || a+traces.Addr(size) > heapLo {
				t.Fatalf("ArenaGet(%d, %d) = %v: not a non-NULL aligned address below the heap", slot, size, a)
			}
			b := buf{a, a + traces.Addr(size*uint64(depth+1))}
			for _, o := range live {
				if b.lo < o.hi && o.lo < b.hi {
					t.Fatalf("buffer [%v, %v) overlaps live buffer [%v, %v)", b.lo, b.hi, o.lo, o.hi)
				}
			}
			live = append(live, b)
		}
	}
}

// TestArenaRefusals: what is refused unrecorded, as no trace can say it.
func TestArenaRefusals(t *testing.T) {
	var rec impl.Recording
	rt := impl.New(impl.Config{Record: rec.Record})
	var ie *impl.Error
	for _, n := range []int{-1, impl.MaxSlots + 1} {
		if err := rt.FnEnter(n); err == nil || errors.As(err, &ie) {
			t.Errorf("FnEnter(%d) = %v, want a plain error", n, err)
		}
		if err := rt.MethodEnter(n); err == nil || errors.As(err, &ie) {
			t.Errorf("MethodEnter(%d) = %v, want a plain error", n, err)
		}
	}
	_ = rt.FnEnter(2)
	_, _ = rt.ArenaGet(1, 16, "")
	for _, n := range []int{-1, impl.MaxSlots + 1} {
		if _, err := rt.ArenaGet(n, 16, ""); err == nil || errors.As(err, &ie) {
			t.Errorf("ArenaGet(%d, ...) = %v, want a plain error", n, err)
		}
	}
	if _, err := rt.ArenaGet(0, impl.MaxArenaSize+1, ""); !errors.Is(err, impl.ErrOutOfMemory) {
		t.Errorf("ArenaGet of more than MaxArenaSize = %v, want ErrOutOfMemory", err)
	}
	if _, err := rt.ArenaGet(0, impl.MaxArenaSize, ""); !errors.Is(err, impl.ErrOutOfMemory) {
		t.Errorf("ArenaGet of the whole arena after a chunk = %v, want ErrOutOfMemory", err)
	}
	if n := len(rec.Events()); n != 2 {
		t.Errorf("%d events recorded, want only the fn_enter and the first arena_get", n)
	}
}
