package model_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCountDrift holds the count check to drifts that change no free in
// the run, and so leave a trace that, without its counts, replays clean:
// it must report each drift once, at the event where it appears.
func TestCountDrift(t *testing.T) {
	// byteCount is a runtime that keeps its counts in a byte.
	byteCount := func(n int) int { return n % 256 }
	exact := func(n int) int { return n }
	cases := []struct {
		name string
		// stated maps the model's count to the runtime's.
		stated func(int) int
		// withhold: the runtime's release number i (from 0) does not
		// lower its count, and writes the count it kept.
		withhold int
		want     []string
	}{
		{name: "correct counts", stated: exact, withhold: -1,
			want: []string{"leaked 0 0", "complete true"}},
		// 300 acquires take the count past 255: the byte reads 0 at the
		// acquire that makes it 256 (event 256: acquire event k makes it
		// k), and agrees again once the releases bring it under 256.
		{name: "count kept in a byte", stated: byteCount, withhold: -1,
			want: []string{"count-mismatch 256 0x1000", "leaked 0 0", "complete true"}},
		// One release withheld: the parameter keeps the tensor to the
		// end, so no free changes; the release's count is one too many.
		{name: "withheld release", stated: exact, withhold: 7,
			want: []string{"count-mismatch 310 0x1000", "leaked 0 0", "complete true"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(`{"format":"tlcheck-trace","version":1}` + "\n" + `{"op":"scope_enter"}` + "\n")
			model, runtime := 1, 1
			line := func(op string) {
				fmt.Fprintf(&b, `{"op":%q,"addr":"0x1000","size":64,"name":"w","count":%d}`+"\n", op, tc.stated(runtime))
			}
			line("alloc")
			model, runtime = model+1, runtime+1
			line("param_register")
			for range 300 {
				model, runtime = model+1, runtime+1
				line("acquire")
			}
			for i := range 300 {
				model--
				if i != tc.withhold {
					runtime--
				}
				line("release")
			}
			b.WriteString(`{"op":"scope_exit"}` + "\n" + `{"op":"end"}` + "\n")
			rep, err := replayText(t, b.String())
			if err != nil {
				t.Fatal(err)
			}
			if got := verdict(rep); !slices.Equal(got, tc.want) {
				t.Errorf("verdict %q, want %q", got, tc.want)
			}
			if model != 2 {
				t.Fatalf("the trace leaves the model's count at %d, want 2", model)
			}
		})
	}
}
