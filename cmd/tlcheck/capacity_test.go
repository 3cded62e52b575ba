package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuzzReplayRefusesProgramsTooBig: a valid program whose tensors the
// runtime has no room for is input tlcheck cannot check (exit 2, naming
// the place), not a runtime bug (exit 1, "write of NULL").
func TestFuzzReplayRefusesProgramsTooBig(t *testing.T) {
	for name, src := range map[string]string{
		"one tensor": "fn main() {\n    let a = zeros(300000000);\n}\n",
		"together":   "fn main() {\n    let a = zeros(200000000);\n    let b = zeros(200000000);\n    let c = add(a, b);\n}\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "big.tl")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := tlcheck(false, "fuzz", "--replay", path)
			if code != exitInput || !strings.Contains(errOut, "big.tl: lang: ") || strings.Contains(out, "NULL") {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}
