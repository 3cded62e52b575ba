package input

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/model"
)

// TestErrorsNameTheFile: an error opening or reading an input names the
// file and the line, hints included: a hint wraps the error after the name
// is in, so that the message shows it.
func TestErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	log := write("a.log", "= Start\n@ ./prog:[0x11ce] + 0x10 0x8\n")
	trace := write("t.jsonl", `{"format":"tlcheck-trace","version":1}`+"\n"+`{"op":"malloc","addr":"0x10","size":8}`+"\n")
	snap := write("s.pickle", "\x80\x04junk")
	tests := []struct {
		name, file string
		format     Format
		want       []string // parts of the message, in order
	}{
		{"an mtrace log read as a trace", log, Trace, []string{log + ":1: header", "looks like a glibc mtrace log"}},
		{"a trace read as an mtrace log", trace, Mtrace, []string{trace + ":1:", "looks like a tlcheck trace"}},
		{"a broken snapshot", snap, TorchSnapshot, []string{snap + ": reading a PyTorch memory snapshot: byte"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Open(tt.file, Options{Format: tt.format})
			if err == nil {
				_, err = model.Replay(in)
				err = in.Explain(err)
				in.Close()
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range tt.want {
				i := strings.Index(msg, w)
				if i < 0 {
					t.Fatalf("error %q lacks %q", msg, w)
				}
				msg = msg[i+len(w):]
			}
		})
	}
}
