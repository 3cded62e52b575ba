package autograd

import (
	"slices"
	"testing"
)

// TestRepoint: dropping a step that made tensors moves the later
// operands that named tensors after them down by as many, and leaves the
// others; a step that made none, or one the run never reached, gives nil.
func TestRepoint(t *testing.T) {
	steps := []Step{{A: 0}, {A: 0}, {A: 0}, {A: 3, B: 1}}
	relative := []Step{{A: 0}, {A: 0}, {A: 0}, {A: Newest(3), B: Newest(0)}}
	tests := []struct {
		name  string
		in    []Step // nil: steps
		sizes []int  // the pool's length before each step
		drop  int
		want  []Step
	}{
		{"the first tensor", nil, []int{0, 1, 3, 4}, 0, []Step{{A: 0}, {A: 0}, {A: 2, B: 0}}},
		{"two tensors; an operand naming one of them is left", nil, []int{0, 1, 3, 4}, 1, []Step{{A: 0}, {A: 0}, {A: 1, B: 1}}},
		{"the last tensor before the step", nil, []int{0, 1, 3, 4}, 2, []Step{{A: 0}, {A: 0}, {A: 3, B: 1}}},
		{"a step that made none", nil, []int{0, 1, 3, 3}, 2, nil},
		{"a step the run did not reach", nil, []int{0, 1, 3, 4}, 3, nil},
		{"counted from the newest: one before the dropped tensors comes nearer, one after stays", relative, []int{0, 1, 3, 4}, 1,
			[]Step{{A: 0}, {A: 0}, {A: Newest(1), B: Newest(0)}}},
	}
	for _, tt := range tests {
		in := tt.in
		if in == nil {
			in = steps
		}
		if got := repoint(in, tt.drop, tt.sizes); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
