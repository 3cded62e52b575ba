package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneIsSingular: a count of one is written singular ("1 statement",
// not "1 statements").
func TestOneIsSingular(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.tl")
	if err := os.WriteFile(path, []byte("fn main() {\n    let a = zeros(16);\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := tlcheck(false, "fuzz", "--replay", path)
	if code != exitClean || !strings.Contains(out, "one.tl (1 statement) against") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
