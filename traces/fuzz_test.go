package traces

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// FuzzReader reads any bytes as a trace and checks that the Reader never
// panics, that it reads the same from a file, a pipe and one byte at a
// time (the same events, positions and errors), and that whatever it read
// writes back, in either layout, and reads again as it was.
//
// Its seed corpus is testdata/fuzz/FuzzReader and the traces in
// testdata/format.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "format", "*"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, evs, pos, err := readAll(bytes.NewReader(data))
		for how, in := range map[string]*bytes.Reader{"pipe": bytes.NewReader(data), "bytewise": bytes.NewReader(data)} {
			var r = noSeek{in}
			if how == "bytewise" {
				r = noSeek{iotest.OneByteReader(in)}
			}
			h2, evs2, pos2, err2 := readAll(r)
			if h2 != h || errString(err2) != errString(err) {
				t.Fatalf("%s: header %+v, error %v; from a file: header %+v, error %v", how, h2, err2, h, err)
			}
			if diff := cmp.Diff(evs, evs2, equateEvents); diff != "" {
				t.Fatalf("%s: events differ from a file's (-file +%s):\n%s", how, how, diff)
			}
			if diff := cmp.Diff(pos, pos2); diff != "" {
				t.Fatalf("%s: positions differ from a file's (-file +%s):\n%s", how, how, diff)
			}
		}
		if h.Format == "" { // no header: nothing to write back
			return
		}
		for _, doc := range []bool{false, true} {
			var b bytes.Buffer
			w := NewWriter(&b, h)
			if doc {
				w = NewDocumentWriter(&b, h)
			}
			for i := range evs {
				if err := w.Write(&evs[i]); err != nil {
					t.Fatalf("writing back event %d (%+v): %v", i, evs[i], err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			h3, evs3, _, err := readAll(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("reading back what was written:\n%s\n%v", b.Bytes(), err)
			}
			if h3 != h {
				t.Fatalf("header read back %+v, want %+v", h3, h)
			}
			if diff := cmp.Diff(evs, evs3, equateEvents); diff != "" {
				t.Fatalf("events read back (-read first +read back):\n%s", diff)
			}
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
