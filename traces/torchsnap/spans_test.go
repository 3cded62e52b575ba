package torchsnap

import (
	"math"
	"slices"
	"testing"
)

// TestSpans: mapped bytes added and cut as sets, whatever the overlaps,
// up to the last byte below 2^64.
func TestSpans(t *testing.T) {
	const top = math.MaxUint64
	tests := []struct {
		name string
		ops  []span // site 1: add; site -1: cut
		want []span
	}{
		{"disjoint, kept by address", []span{{20, 29, 1}, {0, 9, 1}}, []span{{0, 9, 1}, {20, 29, 1}}},
		{"an add fills only the gaps", []span{{0, 9, 1}, {20, 29, 1}, {5, 24, 2}}, []span{{0, 9, 1}, {10, 19, 2}, {20, 29, 1}}},
		{"an add inside adds nothing", []span{{0, 29, 1}, {5, 9, 2}}, []span{{0, 29, 1}}},
		{"a cut in the middle leaves two", []span{{0, 29, 1}, {10, 19, -1}}, []span{{0, 9, 1}, {20, 29, 1}}},
		{"a cut across several", []span{{0, 9, 1}, {10, 19, 1}, {20, 29, 1}, {5, 24, -1}}, []span{{0, 4, 1}, {25, 29, 1}}},
		{"up to 2^64", []span{{top - 9, top, 1}, {top - 19, top, 2}, {top - 4, top, -1}}, []span{{top - 19, top - 10, 2}, {top - 9, top - 5, 1}}},
	}
	for _, tt := range tests {
		var ss []span
		for _, op := range tt.ops {
			if op.site < 0 {
				ss = cutSpan(ss, op)
			} else {
				ss = addSpan(ss, op)
			}
		}
		if !slices.Equal(ss, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, ss, tt.want)
		}
	}
}
