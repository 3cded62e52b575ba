package execfuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/properties/harness"
)

// TestRunRefuses: what Run cannot use is Trouble, said on Stderr before
// any driver runs long: an --out that is no directory, a driver that does
// not start, a --replay file that is not there, an --against line of no
// words.
func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		opts Options
		says string
	}{
		{"out is a file", Options{Command: []string{"true"}, Line: "true", Out: file}, "--out"},
		{"no such driver", Options{Command: []string{filepath.Join(dir, "no-such-driver")}, Line: "x", Out: dir}, "tlcheck fuzz: "},
		{"no replay file", Options{Command: []string{"true"}, Line: "true", Replay: filepath.Join(dir, "none.calls.jsonl")}, "--replay"},
		{"against, no words", Options{Command: []string{"true"}, Line: "true", Out: dir, Against: "  "}, "want the second driver's command line"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			tt.opts.Time, tt.opts.CallTimeout, tt.opts.StartTimeout = time.Second, time.Second, 5*time.Second
			tt.opts.Stdout, tt.opts.Stderr = &out, &errOut
			if got := Run(tt.opts); got != harness.Trouble || !strings.Contains(errOut.String(), tt.says) {
				t.Errorf("outcome %d, stderr %q; want Trouble, saying %q", got, errOut.String(), tt.says)
			}
			if out.Len() > 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}
