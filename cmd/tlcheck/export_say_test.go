package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportSaysWhy: an export that exits 1 says on standard error that
// the trace has violations (how many, of which kinds), and --out takes
// /dev/null and names a file it cannot make as given.
func TestExportSaysWhy(t *testing.T) {
	p := files(t, "stale.jsonl", staleReuse, "clean.json", cleanDoc)
	stale, clean := p[0], p[1]
	code, _, stderr := exportCmd("", "--format", "html", "--out", os.DevNull, stale)
	if code != exitViolation || !strings.Contains(stderr, "tlcheck export: "+stale+": 1 violation (1 stale-reuse): exported; tlcheck replay lists it") {
		t.Errorf("violations: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := exportCmd("", "--format", "perfetto", "--out", os.DevNull, clean); code != exitClean || stderr != "" {
		t.Errorf("clean to /dev/null: exit %d, stderr %q", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "nodir", "x.html")
	code, _, stderr = exportCmd("", "--format", "html", "--out", out, clean)
	if code != exitInput || !strings.Contains(stderr, "create "+out+": in directory") || strings.Contains(stderr, ".tmp") {
		t.Errorf("--out in a missing directory: exit %d, stderr %q", code, stderr)
	}
}
