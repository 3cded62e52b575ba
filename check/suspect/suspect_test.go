package suspect_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// find generates cfg's snapshot, reads it as tlcheck reads any snapshot
// and finds its suspects.
func find(t *testing.T, cfg snapgen.Config, opts suspect.Options) (*snapgen.Snapshot, *suspect.Result) {
	t.Helper()
	s, err := snapgen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := torchsnap.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := suspect.Find(r, opts)
	if err != nil {
		t.Fatalf("%+v: %v", cfg, err)
	}
	return s, res
}

func sites(res *suspect.Result) []string {
	var out []string
	for _, s := range res.Suspects {
		out = append(out, s.Site)
	}
	slices.Sort(out)
	return out
}

// TestSuspects holds the detector to the generated loops' truth: a normal
// loop has no suspect (a suspect invented fails), the loss-keeping loop
// names cross_entropy's site and the graph-keeping loop the forward
// sites (a suspect missed fails), however the loop is sized and recorded.
func TestSuspects(t *testing.T) {
	type tc struct {
		cfg  snapgen.Config
		want []string
	}
	var cases []tc
	for _, base := range []snapgen.Config{
		{},
		{Steps: 5},
		{Steps: 30, Seed: 11},
		{Layers: 6, Hidden: 256, Batch: 32},
		{RecordFrom: 4, Steps: 16},
		{MaxEntries: 1500, Steps: 20},
		{MaxSplitSize: 40 << 20, Hidden: 2048},
	} {
		for _, loop := range []snapgen.Loop{snapgen.Train, snapgen.KeepLoss, snapgen.KeepGraph} {
			cfg := base
			cfg.Loop = loop
			cases = append(cases, tc{cfg, loop.KeptSites()})
		}
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%+v", c.cfg.Loop, c.cfg), func(t *testing.T) {
			_, res := find(t, c.cfg, suspect.Options{})
			if res.Iteration.Site != snapgen.InputSite {
				t.Errorf("iteration marker %q (%s); want %q", res.Iteration.Site, res.Iteration.Reason, snapgen.InputSite)
			}
			if got := sites(res); !slices.Equal(got, c.want) {
				t.Errorf("suspects %q; want %q", got, c.want)
			}
		})
	}
}

// TestLossSuspect checks what the loss-keeping loop's suspect says: one
// block of 4 bytes an iteration, every complete iteration, with the
// first and last blocks as evidence.
func TestLossSuspect(t *testing.T) {
	s, res := find(t, snapgen.Config{Loop: snapgen.KeepLoss, Steps: 12}, suspect.Options{})
	if len(res.Suspects) != 1 {
		t.Fatalf("%d suspects; want 1", len(res.Suspects))
	}
	got := res.Suspects[0]
	want := suspect.Suspect{Site: snapgen.LossSite, BlocksPerIteration: 1, BytesPerIteration: 4,
		FirstIteration: 0, IterationsSeen: 11, Complete: 11, Steadiness: 1, Confidence: "high", Blocks: 11, Bytes: 44}
	ev := got.Evidence
	got.Evidence, got.Stack = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("suspect\n %+v\nwant\n %+v", got, want)
	}
	if len(ev) != 6 || ev[0].Iteration != 0 || ev[5].Iteration != 10 || ev[0].Size != 4 {
		t.Errorf("evidence %+v; want 6 blocks of 4 bytes from iterations 0 to 10", ev)
	}
	if res.Iteration.Count != len(s.Iterations) {
		t.Errorf("%d iterations seen; the loop ran %d", res.Iteration.Count, len(s.Iterations))
	}
}

// TestNamedIteration: a named marker is used as given, matched by the end
// of its path, and one that names no allocation is an error.
func TestNamedIteration(t *testing.T) {
	_, res := find(t, snapgen.Config{Loop: snapgen.KeepLoss}, suspect.Options{Iteration: "train.py:32"})
	if !res.Iteration.Named || res.Iteration.Site != "train.py:32" || len(res.Suspects) != 1 {
		t.Errorf("named marker: %+v, %d suspects", res.Iteration, len(res.Suspects))
	}
	s, err := snapgen.Generate(snapgen.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s.WritePickle(&buf)
	r, _ := torchsnap.NewReader(&buf)
	if _, err := suspect.Find(r, suspect.Options{Iteration: "nowhere.py:1"}); err == nil {
		t.Error("a marker that names no allocation: no error")
	}
}

// TestTooFewIterations: two steps are no evidence of a period.
func TestTooFewIterations(t *testing.T) {
	_, res := find(t, snapgen.Config{Loop: snapgen.KeepLoss, Steps: 2}, suspect.Options{})
	if len(res.Suspects) != 0 || res.Iteration.Reason == "" {
		t.Errorf("2 steps: %+v; want no suspect and a reason", res)
	}
}

// TestRealSnapshot: PyTorch's own snapshot of three SGD steps is too short
// for a period, and names no suspect.
func TestRealSnapshot(t *testing.T) {
	f, err := os.Open("../../traces/torchsnap/testdata/real-cuda.pickle")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := torchsnap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := suspect.Find(r, suspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Suspects) != 0 {
		t.Errorf("suspects in a three-step loop: %+v", res.Suspects)
	}
}

// TestSuspectStack: a suspect shows the stack of its first kept block.
func TestSuspectStack(t *testing.T) {
	opts := suspect.Options{Stack: func(n int) []suspect.Frame {
		return []suspect.Frame{{File: "f.py", Line: int64(n), Name: "made"}}
	}}
	_, res := find(t, snapgen.Config{Loop: snapgen.KeepLoss}, opts)
	if len(res.Suspects) != 1 {
		t.Fatalf("%d suspects", len(res.Suspects))
	}
	s := res.Suspects[0]
	if len(s.Stack) != 1 || s.Stack[0].Line != int64(s.Evidence[0].Event) {
		t.Errorf("stack %+v; want the first kept block's (event %d)", s.Stack, s.Evidence[0].Event)
	}
}

// TestIterationAnnotation: the optimizer's step annotations mark the
// iterations as well as the input's site does.
func TestIterationAnnotation(t *testing.T) {
	s, err := snapgen.Generate(snapgen.Config{Loop: snapgen.KeepLoss, Steps: 12})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	pickle := buf.Bytes()
	r, err := torchsnap.NewReader(bytes.NewReader(pickle))
	if err != nil {
		t.Fatal(err)
	}
	opts := suspect.Options{IterationAnnotation: "Optimizer.step"}
	for _, a := range r.Annotations() {
		if a.Stage == "START" {
			opts.Annotations = append(opts.Annotations, suspect.Annotation{Name: a.Name, T: a.T})
		}
	}
	res, err := suspect.Find(r, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Iteration.Annotation != "Optimizer.step" || !res.Iteration.Named || res.Iteration.Count != 12 {
		t.Errorf("iteration %+v; want 12 marked by Optimizer.step", res.Iteration)
	}
	if got := sites(res); !slices.Equal(got, []string{snapgen.LossSite}) {
		t.Errorf("suspects %q; want the loss's site", got)
	}
	opts.IterationAnnotation = "Optimizer.step#AdamW.step" // the full name names it too
	if r, err = torchsnap.NewReader(bytes.NewReader(pickle)); err != nil {
		t.Fatal(err)
	}
	if res, err := suspect.Find(r, opts); err != nil || res.Iteration.Annotation != "Optimizer.step" {
		t.Errorf("the full name: %v, %+v", err, res)
	}
	opts.IterationAnnotation = "Optimizer.nothing"
	if r, err = torchsnap.NewReader(bytes.NewReader(pickle)); err != nil {
		t.Fatal(err)
	}
	if _, err := suspect.Find(r, opts); err == nil {
		t.Error("an annotation that names none: no error")
	}
}

// TestAnnotationFallback: where no site recurs at a steady period (each
// iteration allocates at its own sites), the annotation that recurs
// most marks the iterations, and the site kept every iteration is named.
func TestAnnotationFallback(t *testing.T) {
	var annots []suspect.Annotation
	for i := range 10 {
		annots = append(annots, suspect.Annotation{Name: "step", T: int64(1000 * (i + 1))}, suspect.Annotation{Name: "rare", T: int64(1000*(i+1) + 500*(i%2))})
	}
	d := suspect.New(suspect.Options{Annotations: annots[:len(annots):len(annots)]})
	id, ev := 0, traces.Event{}
	for i := range 10 {
		for j := range 3 + i { // a varying number of one-off sites
			ev.T = int64(1000*(i+1) + 10*j + 1)
			d.Event(&ev, traces.Pos{})
			id++
			d.Born(model.Thing{ID: id, Site: fmt.Sprintf("once_%d_%d.py:1", i, j), Size: 8})
			d.Died(model.Thing{ID: id}, 0)
		}
		id++
		d.Born(model.Thing{ID: id, Site: "kept.py:7", Size: 64}) // never freed
	}
	res, err := d.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Iteration.Annotation != "step" || res.Iteration.Named {
		t.Errorf("iteration %+v; want the step annotation, detected", res.Iteration)
	}
	if got := sites(res); !slices.Equal(got, []string{"kept.py:7"}) {
		t.Errorf("suspects %q; want kept.py:7", got)
	}
}

// TestCorpus: every trace of the corpus, violations and all, is searched
// without an error (a violation is replay's to report, not the search's).
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../traces/testdata/corpus/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	for _, f := range files {
		in, err := input.Open(f, input.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := suspect.Find(in, suspect.Options{}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		in.Close()
	}
}
