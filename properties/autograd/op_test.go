package autograd

import (
	"slices"
	"testing"
)

// TestTable: the table is whole and says one thing of each operation:
// every kind's op runs in process and every operation that runs in
// process has a kind; an operation the wire does not take has no fields
// on it; an op makes a tensor exactly when its call carries a handle, and
// only the in-place ones take b or a scalar.
func TestTable(t *testing.T) {
	named := map[Op]bool{}
	for i, k := range Kinds {
		r, ok := Lookup(k.Op)
		if !ok || r.Where&InProcess == 0 {
			t.Errorf("kind %d (%s): op %q is not an operation run in process", i, k.Name, k.Op)
		}
		if j, _ := KindOf(k.Name); j != i {
			t.Errorf("kind %d (%s): the name is kind %d's too", i, k.Name, j)
		}
		named[k.Op] = true
	}
	seen := map[Op]bool{}
	for _, r := range Rows() {
		if seen[r.Op] {
			t.Errorf("%s: two rows", r.Op)
		}
		seen[r.Op] = true
		if r.Where == 0 {
			t.Errorf("%s runs nowhere", r.Op)
		}
		if r.Where&InProcess != 0 && !named[r.Op] {
			t.Errorf("%s runs in process, but no kind names it", r.Op)
		}
		required, optional := r.Op.Fields()
		if r.Where&Wire == 0 && (required != 0 || optional != 0 || r.Op.IsCall()) {
			t.Errorf("%s is no layer-5 call, but has fields %v", r.Op, (required | optional).Names())
		}
		if r.Op.Makes() != (r.Fields&FHandle != 0) {
			t.Errorf("%s: Makes %v, handle field %v", r.Op, r.Op.Makes(), r.Fields&FHandle != 0)
		}
		if (optional != 0) != r.Op.InPlace() && r.Op != Zero {
			t.Errorf("%s: in place %v, optional fields %v", r.Op, r.Op.InPlace(), optional.Names())
		}
	}
	if got := Ops(Wire); len(got) != 27 || got[0] != Leaf || got[len(got)-1] != End {
		t.Errorf("Ops(Wire) = %v: want the 27 layer-5 calls, leaf first and end last", got)
	}
	if got := Ops(InProcess); slices.Contains(got, Matmul) || slices.Contains(got, End) || !slices.Contains(got, ClearGrads) {
		t.Errorf("Ops(InProcess) = %v: want clear_grads, and neither matmul nor end", got)
	}
	if _, ok := Lookup("alloc"); ok || Op("alloc").IsCall() || Op("alloc").Makes() {
		t.Error("alloc, no operation of the language, is found")
	}
}

// TestFieldNames: the fields are named as the protocol writes them, in
// the order a call is written.
func TestFieldNames(t *testing.T) {
	got := (FHandle | FA | FB | FRetainGraph).Names()
	if want := []string{"handle", "a", "b", "retain_graph"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	required, optional := AddInPlace.Fields()
	if required != FTarget || optional != FB|FScalar {
		t.Errorf("add_: fields %v and one of %v, want target and one of b, scalar", required.Names(), optional.Names())
	}
	c := Call{Op: AddInPlace, ByScalar: true}
	if c.Fields() != FTarget|FScalar || !c.Uses(map[int]bool{0: true}) {
		t.Errorf("add_ by a scalar: fields %v", c.Fields().Names())
	}
	c = Call{Op: MulInPlace, Target: 1, B: 2}
	if !c.Uses(map[int]bool{2: true}) || c.Uses(map[int]bool{3: true}) {
		t.Error("mul_ by tensor 2 does not use 2, or uses 3")
	}
}
