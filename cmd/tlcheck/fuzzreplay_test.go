package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuzzExecReplayAgainst: --replay with --against replays the calls on
// both drivers and compares their answers, as the search would; a second
// driver that cannot start is an error naming it, not a clean replay.
func TestFuzzExecReplayAgainst(t *testing.T) {
	bin := shellQuote(goDriver(t)) + " -autograd"
	calls := filepath.Join(t.TempDir(), "bump.calls.jsonl")
	text := `{"op":"leaf","handle":1,"shape":[2],"values":[1,2],"requires_grad":false}
{"op":"add_","target":1,"scalar":1}
{"op":"end"}
`
	if err := os.WriteFile(calls, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := tlcheck(false, "fuzz", "--exec", bin, "--against", bin+" -fault autograd-double-bump", "--replay", calls)
	if code != exitViolation || !strings.Contains(out, "the drivers disagree at call 1: tensor.version") || !strings.Contains(out, "(3 calls, as given)") {
		t.Errorf("--replay --against a faulty engine: exit %d, want 1 and the disagreement\n%s%s", code, out, errOut)
	}
	code, out, errOut = tlcheck(false, "fuzz", "--exec", bin, "--against", bin, "--replay", calls)
	if code != exitClean || !strings.Contains(out, "3 calls replayed on") || !strings.Contains(out, "no disagreement") {
		t.Errorf("--replay --against the same engine: exit %d, want 0\n%s%s", code, out, errOut)
	}
	code, out, errOut = tlcheck(false, "fuzz", "--exec", bin, "--against", "/nonexistent/driver", "--replay", calls)
	if code != exitInput || !strings.Contains(errOut, "driver B (--against)") || strings.Contains(out, "no failure") {
		t.Errorf("--replay --against a driver that does not exist: exit %d, want 2 naming driver B\n%s%s", code, out, errOut)
	}
}

// TestFuzzExecReplayBounds: a calls file beyond what tlcheck takes from a
// driver is refused as input (exit 2) before any driver starts, naming
// the line and the bound, not blamed on the driver.
func TestFuzzExecReplayBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"op":"scope_enter"}` + "\n")
	for h := 1; h <= 30000; h++ {
		fmt.Fprintf(&b, `{"op":"alloc","handle":%d,"size":8}`+"\n", h)
	}
	b.WriteString(`{"op":"scope_exit"}` + "\n" + `{"op":"end"}` + "\n")
	calls := filepath.Join(t.TempDir(), "big.calls.jsonl")
	if err := os.WriteFile(calls, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := tlcheck(false, "fuzz", "--exec", "/nonexistent/driver", "--replay", calls)
	if code != exitInput || !strings.Contains(errOut, "line 16385: the program makes more than 16383 objects") || strings.Contains(errOut, "nonexistent") {
		t.Errorf("30,000 allocations: exit %d, want 2 naming the bound before the driver starts\n%s%s", code, out, errOut)
	}
}
