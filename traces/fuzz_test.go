package traces

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The helpers FuzzReader shares with the other tests live here, not in
// reader_test.go: OSS-Fuzz's libFuzzer build (.clusterfuzzlite/build.sh)
// compiles a target's file alone with the package's non-test files, so the
// target must need nothing from the other _test.go files.

// equateEvents compares events, taking a nil Fields for an empty one.
var equateEvents = cmpopts.EquateEmpty()

// readAll reads a whole trace, returning its header, events and positions,
// and the error that ended it (nil at a clean end).
func readAll(in io.Reader) (Header, []Event, []Pos, error) {
	r, err := NewReader(in)
	if err != nil {
		return Header{}, nil, nil, err
	}
	var evs []Event
	var pos []Pos
	for {
		var ev Event
		err := r.Next(&ev)
		if err == io.EOF {
			return r.Header(), evs, pos, nil
		}
		if err != nil {
			return r.Header(), evs, pos, err
		}
		evs = append(evs, ev)
		pos = append(pos, r.Pos())
	}
}

// noSeek hides a reader's Seek method, as a pipe has none.
type noSeek struct{ io.Reader }

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
