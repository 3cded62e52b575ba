package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/snapgen"
)

// pageExtras is what the page's script reads of the extras in its data.
type pageExtrasData struct {
	Suspects []struct {
		Site       string   `json:"site"`
		Stack      []string `json:"stack"`
		Events     []int    `json:"events"`
		Iterations int      `json:"iterations"`
		Confidence string   `json:"confidence"`
	} `json:"suspects"`
	OOM *struct {
		Event    int    `json:"event"`
		Request  uint64 `json:"request"`
		Capacity uint64 `json:"capacity"`
		Reserved uint64 `json:"reserved"`
		Pools    []struct {
			Pool string `json:"pool"`
		} `json:"pools"`
		Sites  []struct{ Site string } `json:"sites"`
		WhatIf []struct {
			Setting      string `json:"setting"`
			PeakReserved uint64 `json:"peakReserved"`
		} `json:"whatIf"`
		Note string `json:"note"`
	} `json:"oom"`
}

// pageExtrasOf exports file (stdin for "-") as HTML and returns the
// extras the page embeds in its data; nil where it has none.
func pageExtrasOf(t *testing.T, file string, stdin []byte, wantCode int) *pageExtrasData {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(&env{stdin: bytes.NewReader(stdin), stdout: &stdout, stderr: &stderr}, []string{"export", "--format", "html", file}); code != wantCode {
		t.Fatalf("export %s: exit %d: %s", file, code, stderr.String())
	}
	_, s, ok := strings.Cut(stdout.String(), `<script type="application/json" id="mem-data">`)
	s, _, ok2 := strings.Cut(s, "</script>")
	if !ok || !ok2 {
		t.Fatalf("export %s: the page has no mem-data", file)
	}
	var d struct {
		Extras *pageExtrasData `json:"extras"`
	}
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatalf("export %s: mem-data: %v", file, err)
	}
	return d.Extras
}

func TestExportPageExtras(t *testing.T) {
	dir := t.TempDir()
	oom := writeSnapshot(t, dir, "oom.pickle", snapgen.Config{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 300 << 20})
	loss := writeSnapshot(t, dir, "loss.pickle", snapgen.Config{Loop: snapgen.KeepLoss})
	normal := writeSnapshot(t, dir, "train.pickle", snapgen.Config{Loop: snapgen.Train})

	// A kept graph that ran out of memory: its kept sites and the OOM.
	x := pageExtrasOf(t, oom, nil, exitClean)
	if x == nil {
		t.Fatal("oom.pickle: the page has no extras")
	}
	var sites []string
	for _, s := range x.Suspects {
		sites = append(sites, s.Site)
		if len(s.Events) == 0 || s.Iterations < 3 || s.Confidence == "" {
			t.Errorf("oom.pickle: suspect %s without evidence: %+v", s.Site, s)
		}
	}
	slices.Sort(sites)
	if want := snapgen.KeepGraph.KeptSites(); !slices.Equal(sites, want) {
		t.Errorf("oom.pickle: suspects %v, want %v", sites, want)
	}
	switch o := x.OOM; {
	case o == nil:
		t.Error("oom.pickle: the page has no OOM")
	case o.Request == 0 || o.Capacity == 0 || o.Reserved == 0 || len(o.Pools) == 0 || len(o.Sites) == 0:
		t.Errorf("oom.pickle: OOM without its state: %+v", o)
	case len(o.WhatIf) == 0 || o.WhatIf[0].Setting != "default" || o.WhatIf[0].PeakReserved == 0:
		t.Errorf("oom.pickle: what-ifs %+v, want the recorded (default) first with its peak", o.WhatIf)
	case !strings.Contains(o.Note, "recorded under default"):
		t.Errorf("oom.pickle: note %q", o.Note)
	}

	// The kept loss, read from standard input: its suspect, no OOM.
	data, err := os.ReadFile(loss)
	if err != nil {
		t.Fatal(err)
	}
	x = pageExtrasOf(t, "-", data, exitClean)
	if x == nil || len(x.Suspects) != 1 || x.Suspects[0].Site != snapgen.LossSite || x.OOM != nil {
		t.Errorf("loss.pickle from stdin: extras %+v, want the loss's suspect alone", x)
	} else if s := x.Suspects[0]; len(s.Stack) == 0 || !strings.HasPrefix(s.Stack[0], "cross_entropy ") {
		t.Errorf("loss.pickle: stack %q, want cross_entropy's innermost", s.Stack)
	}

	// A loop that keeps nothing, and a trace with an end: nothing.
	if x := pageExtrasOf(t, normal, nil, exitClean); x != nil && (len(x.Suspects) > 0 || x.OOM != nil) {
		t.Errorf("train.pickle: extras %+v, want none", x)
	}

	// A loop that keeps a block an iteration: a suspect without an end,
	// none with one (the model's leak check runs instead).
	var loop strings.Builder
	loop.WriteString(`{"format":"tlcheck-trace","version":1}` + "\n")
	for i := range 10 {
		fmt.Fprintf(&loop, `{"op":"malloc","addr":"0x%x","size":64,"site":"loop.c:1"}`+"\n", 0x1000)
		fmt.Fprintf(&loop, `{"op":"malloc","addr":"0x%x","size":8,"site":"keep.c:2"}`+"\n", 0x2000+16*i)
		fmt.Fprintf(&loop, `{"op":"free","addr":"0x%x"}`+"\n", 0x1000)
	}
	if x := pageExtrasOf(t, "-", []byte(loop.String()), exitClean); x == nil || len(x.Suspects) != 1 || x.Suspects[0].Site != "keep.c:2" {
		t.Errorf("a loop without an end: extras %+v, want keep.c:2's suspect", x)
	}
	loop.WriteString(`{"op":"end"}` + "\n")
	if x := pageExtrasOf(t, "-", []byte(loop.String()), exitViolation); x != nil && (len(x.Suspects) > 0 || x.OOM != nil) {
		t.Errorf("a loop with an end: extras %+v, want none", x)
	}
}
