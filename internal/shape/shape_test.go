package shape

import (
	"slices"
	"testing"
)

func TestBroadcast(t *testing.T) {
	for _, tc := range []struct {
		a, b, want []int
		mismatch   *Mismatch
	}{
		{[]int{}, []int{}, []int{}, nil},
		{[]int{3}, []int{}, []int{3}, nil},
		{[]int{2, 1}, []int{1, 3}, []int{2, 3}, nil},
		{[]int{3, 1}, []int{3}, []int{3, 3}, nil},
		{[]int{1}, []int{2, 3}, []int{2, 3}, nil},
		{[]int{2}, []int{3}, nil, &Mismatch{A: 2, B: 3, Dim: 0}},
		// The mismatch nearest the last dimension is the one reported.
		{[]int{2, 3}, []int{4, 5}, nil, &Mismatch{A: 3, B: 5, Dim: 1}},
		{[]int{2, 3}, []int{3, 3}, nil, &Mismatch{A: 2, B: 3, Dim: 0}},
	} {
		got, m := Broadcast(tc.a, tc.b)
		if !slices.Equal(got, tc.want) || (m == nil) != (tc.mismatch == nil) || m != nil && *m != *tc.mismatch {
			t.Errorf("Broadcast(%v, %v) = %v, %+v; want %v, %+v", tc.a, tc.b, got, m, tc.want, tc.mismatch)
		}
	}
}

func TestMatmul(t *testing.T) {
	for _, tc := range []struct {
		a, b, want []int
		ok         bool
	}{
		{[]int{3}, []int{3}, []int{}, true},
		{[]int{2, 3}, []int{3}, []int{2}, true},
		{[]int{3}, []int{3, 2}, []int{2}, true},
		{[]int{2, 3}, []int{3, 1}, []int{2, 1}, true},
		{[]int{2, 3}, []int{2, 3}, nil, false},
		{[]int{}, []int{3}, nil, false},
	} {
		if got, ok := Matmul(tc.a, tc.b); !slices.Equal(got, tc.want) || ok != tc.ok {
			t.Errorf("Matmul(%v, %v) = %v, %v; want %v, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNumel(t *testing.T) {
	if Numel([]int{}) != 1 || Numel([]int{2, 3}) != 6 || Numel([]int{0, 3}) != 0 {
		t.Error("Numel: want 1 for [], 6 for [2 3], 0 for [0 3]")
	}
}
