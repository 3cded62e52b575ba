package impl_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/tlcheck/tlcheck/traces"
)

// foreignOps are the ops of the format that no runtime of impl/ makes,
// each with the runtime that does: the format reads their traces, and
// nothing here has the call.
var foreignOps = map[traces.Op]string{
	traces.OpRealloc: "glibc's realloc, read from mtrace logs (traces/mtrace); impl's heap has no realloc",
}

// TestEveryOpHasARuntimeCall: every op of the table is written by some
// runtime of impl/ (Runtime, the allocators of impl/gpu, the autograd
// engine, ...): the op's constant appears in its code, not only its
// tests. An op added to the format without the call that makes it fails
// here by name, so that the property tests and the fuzz targets, which
// drive these runtimes, reach it.
func TestEveryOpHasARuntimeCall(t *testing.T) {
	used := map[string]bool{}
	opRef := regexp.MustCompile(`traces\.(Op[A-Za-z]+)\b`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range opRef.FindAllSubmatch(src, -1) {
			used[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range traces.Ops() {
		_, foreign := foreignOps[op]
		switch made := used[goName(op)]; {
		case !made && !foreign:
			t.Errorf("op %s: no runtime in impl/ makes it (%s appears in no file of impl/ but tests): add the call that writes it, or list the op in foreignOps with the runtime that does", op, "traces."+goName(op))
		case made && foreign:
			t.Errorf("op %s: listed in foreignOps, but impl/ makes it: take it off the list", op)
		}
	}
}

// goName is the Go name of an op's constant: OpScopeEnter for scope_enter.
func goName(op traces.Op) string {
	var b strings.Builder
	b.WriteString("Op")
	for part := range strings.SplitSeq(op.String(), "_") {
		r := []rune(part)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}
