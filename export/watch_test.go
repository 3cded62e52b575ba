package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// TestOptionsWatch: a watch given in Options hears the export's replay
// (what was made, what died, the close), and what it puts in Page by its
// Closed is on the page.
func TestOptionsWatch(t *testing.T) {
	const trace = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":64,"site":"a.c:1"}
{"op":"malloc","addr":"0x20","size":8,"site":"keep.c:2"}
{"op":"free","addr":"0x10"}
`
	for _, f := range Formats() {
		r, err := traces.NewReader(strings.NewReader(trace))
		if err != nil {
			t.Fatal(err)
		}
		extras := &PageExtras{}
		var events, born, died, live int
		w := &model.Watch{
			Event: func(*traces.Event, traces.Pos) { events++ },
			Born:  func(model.Thing) { born++ },
			Died:  func(model.Thing, int) { died++ },
			Closed: func(l []model.Thing) {
				live = len(l)
				extras.Suspects = []PageSuspect{{Site: "keep.c:2", Confidence: "filled at close"}}
			},
		}
		var out bytes.Buffer
		if _, err := Write(&out, f, r, Options{Name: "t", Page: extras, Watch: w}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if events != 3 || born != 2 || died != 1 || live != 1 {
			t.Errorf("%s: the watch heard %d events, %d born, %d died, %d live; want 3, 2, 1, 1", f, events, born, died, live)
		}
		if f == HTML && !strings.Contains(out.String(), `"confidence":"filled at close"`) {
			t.Errorf("the page lacks the suspect filled in at close")
		}
	}
}
