package input

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRereadServesEachReaderWhole: standard input is read once, and
// every reader of it, and of a named file, gets it from its start.
func TestRereadServesEachReaderWhole(t *testing.T) {
	const data = "{\"format\":\"tlcheck-trace\",\"version\":1}\n{\"op\":\"end\"}\n"
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, name string }{{"-", "<stdin>"}, {path, path}} {
		r, err := NewReread(c.file, strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if r.Name() != c.name {
			t.Errorf("%s: name %q, want %q", c.file, r.Name(), c.name)
		}
		for i := range 2 {
			f, err := r.Raw()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err != nil || string(b) != data {
				t.Errorf("%s: read %d: %q, %v", c.file, i, b, err)
			}
			in, err := Open(c.file, r.Options(Options{}))
			if err != nil {
				t.Fatalf("%s: open %d: %v", c.file, i, err)
			}
			in.Close()
		}
	}
}

func TestRereadNamesStdinInErrors(t *testing.T) {
	_, err := NewReread("-", io.MultiReader(strings.NewReader("x"), errReader{}))
	if err == nil || !strings.HasPrefix(err.Error(), "<stdin>: ") {
		t.Errorf("error %v, want one naming <stdin>", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
