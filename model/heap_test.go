package model_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tlcheck/tlcheck/traces"
)

const (
	hdr  = `{"format":"tlcheck-trace","version":1}`
	hdrE = `{"format":"tlcheck-trace","version":1,"effects":true}`
)

// scenario is a trace and its verdict in the .want form.
type scenario struct {
	name  string
	trace string
	want  []string
}

func runScenarios(t *testing.T, cases []scenario) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := replayText(t, tc.trace)
			if err != nil {
				t.Fatalf("Replay: %v", err)
			}
			if diff := cmp.Diff(tc.want, verdict(r)); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
				for _, v := range r.Violations {
					t.Logf("%s at event %d: %s %v", v.Kind, v.Event, v.Message, v.Related)
				}
			}
		})
	}
}

func TestHeap(t *testing.T) {
	runScenarios(t, []scenario{
		{"clean", hdr + `
{"op":"malloc","addr":"0x100","size":16}
{"op":"realloc","addr":"0x100","new_addr":"0x200","size":32}
{"op":"write","addr":"0x210","size":16}
{"op":"free","addr":"0x200"}
{"op":"free","addr":"0x0"}
{"op":"malloc","addr":"0x0","size":8}
{"op":"end"}`, []string{"leaked 0 0", "complete true"}},
		{"double free", hdr + `
{"op":"malloc","addr":"0x100","size":16}
{"op":"free","addr":"0x100"}
{"op":"free","addr":"0x100"}`, []string{"double-free 2 0x100", "leaked 0 0", "complete false"}},
		{"use after free", hdr + `
{"op":"malloc","addr":"0x100","size":16}
{"op":"free","addr":"0x100"}
{"op":"read","addr":"0x108"}`, []string{"use-after-free 2 0x108", "leaked 0 0", "complete false"}},
		{"realloc frees the old block", hdr + `
{"op":"malloc","addr":"0x100","size":16}
{"op":"realloc","addr":"0x100","new_addr":"0x200","size":32}
{"op":"realloc","addr":"0x100","new_addr":"0x0","size":0}`, []string{"double-free 2 0x100", "leaked 0 0", "complete false"}},
		{"free of nothing", hdr + `
{"op":"free","addr":"0x99"}`, []string{"invalid-address 0 0x99", "leaked 0 0", "complete false"}},
		{"free inside a block", hdr + `
{"op":"malloc","addr":"0x100","size":64}
{"op":"free","addr":"0x108"}
{"op":"free","addr":"0x100"}
{"op":"end"}`, []string{"invalid-address 1 0x108", "leaked 0 0", "complete true"}},
		{"read of NULL", hdr + `
{"op":"read","addr":"0x0"}`, []string{"invalid-address 0 0x0", "leaked 0 0", "complete false"}},
		{"read past the end", hdr + `
{"op":"malloc","addr":"0x100","size":16}
{"op":"read","addr":"0x10c","size":8}
{"op":"read","addr":"0x10c","size":4}`, []string{"invalid-address 1 0x10c", "leaked 0 0", "complete false"}},
		{"partial overlap keeps both", hdr + `
{"op":"malloc","addr":"0x100","size":64}
{"op":"malloc","addr":"0x120","size":64}
{"op":"end"}`, []string{"overlap 1 0x120", "leak 2 0x100", "leak 2 0x120", "leaked 2 128", "complete true"}},
		{"malloc at a live block's start is ignored", hdr + `
{"op":"malloc","addr":"0x100","size":64}
{"op":"malloc","addr":"0x100","size":32}
{"op":"free","addr":"0x100"}
{"op":"end"}`, []string{"overlap 1 0x100", "leaked 0 0", "complete true"}},
		{"reuse forgets the dead block", hdr + `
{"op":"malloc","addr":"0x100","size":64}
{"op":"free","addr":"0x100"}
{"op":"malloc","addr":"0x120","size":8}
{"op":"read","addr":"0x100"}
{"op":"free","addr":"0x100"}
{"op":"end"}`, []string{"invalid-address 3 0x100", "invalid-address 4 0x100", "leak 5 0x120", "leaked 1 8", "complete true"}},
		{"leak at end", hdr + `
{"op":"malloc","addr":"0x100","size":16}
{"op":"malloc","addr":"0x200","size":32}
{"op":"free","addr":"0x100"}
{"op":"end"}`, []string{"leak 3 0x200", "leaked 1 32", "complete true"}},
		{"no end, no leak check", hdr + `
{"op":"malloc","addr":"0x100","size":16}`, []string{"leaked 0 0", "complete false"}},
	})
}

func TestFreeOfObjectNeedsEffects(t *testing.T) {
	_, err := replayText(t, hdr+`
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":16}
{"op":"free","addr":"0x100"}`)
	var te *traces.Error
	if !errors.As(err, &te) {
		t.Fatalf("Replay: got error %v, want a *traces.Error", err)
	}
	if te.Event != 2 || te.Line != 4 || te.Field != "addr" || !strings.Contains(te.Err.Error(), `"effects": true`) {
		t.Errorf("error names event %d line %d field %q (%v); want event 2 line 4 field addr, mentioning \"effects\": true",
			te.Event, te.Line, te.Field, te.Err)
	}
}

// TestAccessMessageSize holds the message of a bad access to the size the
// trace gave, whole: a read of 2^32 bytes was once described as one of
// 1073741824 bytes (a count clamped to fit an int).
func TestAccessMessageSize(t *testing.T) {
	tests := []struct {
		size uint64
		want string
	}{
		{1, "read of 1 byte at 0x100: nothing is allocated there"},
		{8, "read of 8 bytes at 0x100: nothing is allocated there"},
		{1 << 30, "read of 1073741824 bytes at 0x100"},
		{1<<30 + 1, "read of 1073741825 bytes at 0x100"},
		{1 << 32, "read of 4294967296 bytes at 0x100"},
		{1<<64 - 1, "read of 18446744073709551615 bytes at 0x100"},
	}
	for _, tt := range tests {
		r, err := replayText(t, hdr+fmt.Sprintf(`
{"op":"read","addr":"0x100","size":%d}`, tt.size))
		if err != nil {
			t.Fatalf("size %d: Replay: %v", tt.size, err)
		}
		if len(r.Violations) != 1 || !strings.HasPrefix(r.Violations[0].Message, tt.want) {
			t.Errorf("size %d: violations %+v, want one whose message starts %q", tt.size, r.Violations, tt.want)
		}
	}
}
