package source

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
)

// faultLine is a regression program's note of the fault it pins:
// "// fault: NAME".
var faultLine = regexp.MustCompile(`(?m)^// fault: (\S+)$`)

// TestSourceRegressions: every source program under testdata/source (a
// counterexample once found on the correct path, or a sibling of one)
// keeps both source properties on the correct runtime and lowering; each
// breaks them with the fault its "// fault:" line names, which is the
// bug it was found by, so the file can fail.
func TestSourceRegressions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "source", "*.tl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no regression programs in testdata/source")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := lang.Parse(string(src))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			f, err := Run(p, impl.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if f != nil {
				t.Errorf("correct runtime and lowering: %v", f)
			}
			m := faultLine.FindStringSubmatch(string(src))
			if m == nil {
				t.Fatalf("no // fault: line names the bug it pins")
			}
			f, err = Run(p, impl.Config{Faults: []impl.Fault{impl.Fault(m[1])}})
			if err != nil {
				t.Fatal(err)
			}
			if f == nil {
				t.Errorf("fault %s: both properties hold; the program does not pin it", m[1])
			}
		})
	}
}
