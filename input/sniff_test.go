package input

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSniff checks what --from auto makes of a file's first bytes: every
// pickle Python writes of a snapshot (protocols 0 to 5) is read as one,
// a PROTO of a protocol this tlcheck does not know is refused as the
// pickle it is, naming the protocol, and text is never taken for one.
// clean-p1.pickle is traces/torchsnap/testdata/clean-p2.pickle loaded and
// written again by Python with pickle.dumps(snapshot, 1).
func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		file string // a path, or the content itself after "="
		want Format // what Open reads it as; "" when Open must fail
		err  string // a part of Open's or the replay's error
	}{
		{"protocol 0", "../traces/torchsnap/testdata/clean-p0.pickle", TorchSnapshot, ""},
		{"protocol 1", "testdata/clean-p1.pickle", TorchSnapshot, ""},
		{"protocol 2", "../traces/torchsnap/testdata/clean-p2.pickle", TorchSnapshot, ""},
		{"protocol 5", "../traces/torchsnap/testdata/clean-p5.pickle", TorchSnapshot, ""},
		{"an unknown protocol", "=\x80\x09junk", "", "PROTO 9: pickle protocols go up to 5"},
		{"a trace", `={"format":"tlcheck-trace","version":1}` + "\n", Trace, ""},
		{"an mtrace log", "== Start\n@ ./p:[0x1] + 0x10 0x8\n", Mtrace, ""},
		{"text that begins as no pickle", "=(not a pickle\n", "", "header"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.file
			if text, ok := strings.CutPrefix(tt.file, "="); ok {
				path = filepath.Join(dir, "f"+string(rune('a'+i)))
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			in, err := Open(path, Options{})
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Open: %v, want an error with %q", err, tt.err)
				}
				if err == nil {
					in.Close()
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if in.Format() != tt.want {
				t.Errorf("read as %s, want %s", in.Format(), tt.want)
			}
		})
	}
}

// TestWrongFormatHints checks that a file read as a format it is not gets
// a hint naming what it looks like, whichever format was asked for.
func TestWrongFormatHints(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trace := write("t.jsonl", `{"format":"tlcheck-trace","version":1}`+"\n")
	log := write("a.log", "= Start\n@ ./prog:[0x11ce] + 0x10 0x8\n")
	p1, err := os.ReadFile("testdata/clean-p1.pickle")
	if err != nil {
		t.Fatal(err)
	}
	snap := write("s.pickle", string(p1))
	tests := []struct {
		name, file string
		format     Format
		want       string
	}{
		{"a trace as a snapshot", trace, TorchSnapshot, "this looks like a tlcheck trace: read it with --from trace, or without --from"},
		{"a log as a snapshot", log, TorchSnapshot, "this looks like a glibc mtrace log: read it with --from mtrace, or without --from"},
		{"a protocol-1 pickle as a trace", snap, Trace, "this looks like a pickle, such as a PyTorch memory snapshot, of protocol 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Open(tt.file, Options{Format: tt.format})
			if err == nil {
				in.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v, want an error with %q", err, tt.want)
			}
		})
	}
}
