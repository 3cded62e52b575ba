package impl

import (
	"fmt"
	"slices"
	"testing"
)

// TestMinHeapOrder: the planner's queues keep the heap order (no item
// before its parent) after every push and pop, and give their least item
// first, whatever the order of the pushes and however pushes and pops
// interleave: every order of pushing nine distinct items, popped to the
// end, and every order of eight with a pop after each push past the
// fourth. A heap that compares the wrong children keeps an item below a
// larger one and pops it late; the planner then frees a slot late and
// plans a frame a slot too large, which random lifetimes seldom show.
func TestMinHeapOrder(t *testing.T) {
	perm := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	for {
		h := minHeap[int]{before: intBefore}
		for _, x := range perm {
			h.push(x)
			if err := heapOrdered(h); err != "" {
				t.Fatalf("pushed %v: %s", perm, err)
			}
		}
		for want := range perm {
			if got := h.pop(); got != want {
				t.Fatalf("pushed %v, then pop %d gave %d, want %d", perm, want, got, want)
			}
			if err := heapOrdered(h); err != "" {
				t.Fatalf("pushed %v, then popped %d: %s", perm, want+1, err)
			}
		}
		if !nextPerm(perm) {
			break
		}
	}
	perm = perm[:8]
	slices.Sort(perm)
	for {
		h := minHeap[int]{before: intBefore}
		var model []int
		for i, x := range perm {
			h.push(x)
			model = append(model, x)
			if i >= 4 {
				slices.Sort(model)
				if got := h.pop(); got != model[0] {
					t.Fatalf("pushed %v, popping after each push past the fourth: pop gave %d, want %d", perm[:i+1], got, model[0])
				}
				model = model[1:]
			}
		}
		if !nextPerm(perm) {
			break
		}
	}
}

// heapOrdered says where h breaks the heap order: an item before its
// parent. "" if nowhere.
func heapOrdered[T any](h minHeap[T]) string {
	for i := 1; i < len(h.items); i++ {
		if p := (i - 1) / 2; h.before(h.items[i], h.items[p]) {
			return fmt.Sprintf("item %d (%v) is before its parent %d (%v) in %v", i, h.items[i], p, h.items[p], h.items)
		}
	}
	return ""
}

// nextPerm rearranges p into its next permutation in lexicographic order,
// false after the last.
func nextPerm(p []int) bool {
	i := len(p) - 2
	for i >= 0 && p[i] >= p[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(p) - 1
	for p[j] <= p[i] {
		j--
	}
	p[i], p[j] = p[j], p[i]
	slices.Reverse(p[i+1:])
	return true
}
