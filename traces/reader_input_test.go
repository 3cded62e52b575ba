package traces

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// Tests of how the Reader takes its input: seeking, refills, the interner,
// allocations and failing reads.

// TestReadSeeksBack checks that a document whose header comes last is read
// from a file, by seeking, in the same way as from a pipe, and that a
// reader opened in the middle of a file reads from there.
func TestReadSeeksBack(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "format", "header-last.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(path, append([]byte("garbage before"), data...), 0o666); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(int64(len("garbage before")), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	_, evs, _, err := readAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(allOps, evs, equateEvents); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestReadLongTokens crosses buffer refills inside strings, escapes and
// numbers, fed whole and one byte at a time.
func TestReadLongTokens(t *testing.T) {
	long := strings.Repeat("ab\\u00e9", bufSize/3)
	want := strings.Repeat("abé", bufSize/3)
	num := "1" + strings.Repeat("0", 15) + "." + strings.Repeat("0", bufSize) + "e0"
	text := stream(plainHeader,
		`{"op":"end","site":"`+long+`"}`,
		`{"op":"malloc","addr":"0x10","size":`+num+`,"x":"`+long+`"}`,
		`{"op":"end","site":"`+strings.Repeat("é", bufSize)+`"}`,
	)
	for how, in := range inputs([]byte(text)) {
		t.Run(how, func(t *testing.T) {
			_, evs, _, err := readAll(in())
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 3 || evs[0].Site != want || evs[1].Size != 1e15 || evs[2].Site != strings.Repeat("é", bufSize) {
				t.Errorf("read %d events, wrong values", len(evs))
			}
		})
	}
}

// TestReadInterns checks that many distinct strings read back right, more
// than the cache holds, and that repeated ones are not allocated again.
func TestReadInterns(t *testing.T) {
	var b strings.Builder
	b.WriteString(plainHeader + "\n")
	const distinct = 3 * internSets * internWays
	for i := range 2 * distinct {
		ev := Event{Op: OpEnd, Site: "s" + strings.Repeat("x", i%7) + string(rune('a'+i%distinct%26)) + strconv.Itoa(i%distinct)}
		b.Write(AppendEvent(nil, &ev))
		b.WriteByte('\n')
	}
	_, evs, _, err := readAll(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if want := "s" + strings.Repeat("x", i%7) + string(rune('a'+i%distinct%26)) + strconv.Itoa(i%distinct); ev.Site != want {
			t.Fatalf("event %d: site %q, want %q", i, ev.Site, want)
		}
	}
}

// TestReadAllocs checks that a warm Reader allocates nothing per event.
func TestReadAllocs(t *testing.T) {
	stream, doc := benchTrace()
	for name, data := range map[string][]byte{"stream": stream, "document": doc} {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var ev Event
		for range 1000 { // warm: the interner and Fields' array
			if err := r.Next(&ev); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(10000, func() {
			if err := r.Next(&ev); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per event, want 0", name, allocs)
		}
	}
}

// TestReadFailingInput reports a read error as an *Error that wraps it.
func TestReadFailingInput(t *testing.T) {
	boom := errors.New("disk on fire")
	in := io.MultiReader(strings.NewReader(stream(plainHeader, `{"op":"end"}`)+`{"op":"fr`), iotest.ErrReader(boom))
	r, err := NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	if err := r.Next(&ev); err != nil {
		t.Fatal(err)
	}
	err = r.Next(&ev)
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, boom) || te.Line != 3 || te.Event != 1 || te.Field != "" {
		t.Fatalf("got %#v, want an *Error at line 3, event 1 wrapping %v", err, boom)
	}
	if got, want := err.Error(), "line 3: event 1: reading the trace: disk on fire"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if again := r.Next(&ev); again != err {
		t.Errorf("second Next = %v, want the same error", again)
	}
}
