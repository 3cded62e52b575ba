package check

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/input"
)

// loopTrace is a loop of ten iterations, each marked by an allocation at
// batch.py:1 and freed, that keeps one block at keep.py:2 every time.
func loopTrace(end bool) string {
	var b strings.Builder
	b.WriteString(`{"format":"tlcheck-trace","version":1}` + "\n")
	for i := range 10 {
		batch, kept := 0x1000+i*0x100, 0x100000+i*0x100
		b.WriteString(fmt.Sprintf(`{"op":"malloc","addr":"0x%x","size":64,"site":"batch.py:1"}`+"\n", batch))
		b.WriteString(fmt.Sprintf(`{"op":"malloc","addr":"0x%x","size":32,"site":"keep.py:2"}`+"\n", kept))
		b.WriteString(fmt.Sprintf(`{"op":"free","addr":"0x%x","site":"batch.py:3"}`+"\n", batch))
	}
	if end {
		b.WriteString(`{"op":"end"}` + "\n")
	}
	return b.String()
}

// TestPageWatch: the export's replay fills the page's suspects for a
// trace without an end, and none for one that ends.
func TestPageWatch(t *testing.T) {
	for _, end := range []bool{false, true} {
		in, err := input.Open("-", input.Options{Stdin: strings.NewReader(loopTrace(end))})
		if err != nil {
			t.Fatal(err)
		}
		extras := &export.PageExtras{}
		_, err = export.Write(io.Discard, export.HTML, in, export.Options{Name: "t", Page: extras, Watch: PageWatch(in, extras)})
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case end && extras.Suspects != nil:
			t.Errorf("a trace with an end: suspects %+v, want none", extras.Suspects)
		case !end && (len(extras.Suspects) != 1 || extras.Suspects[0].Site != "keep.py:2"):
			t.Errorf("a trace without an end: suspects %+v, want keep.py:2", extras.Suspects)
		}
	}
}
