package model_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// corpusDir holds the example traces: NAME.jsonl, each with its verdict in
// NAME.want (one line per violation, "KIND EVENT ADDR", in report order,
// then "leaked OBJECTS BYTES" and "complete true|false"). A file named
// clean-* must have no violation and reach end; incomplete-* no violation
// and no end (a run cut off); KIND-* must have a violation of KIND.
var corpusDir = filepath.Join("..", "traces", "testdata", "corpus")

type corpusFile struct {
	name  string // without extension
	trace []byte
	want  []string
}

func loadCorpus(t *testing.T) []corpusFile {
	t.Helper()
	traceFiles, err := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	if err != nil || len(traceFiles) == 0 {
		t.Fatalf("no traces in %s (%v)", corpusDir, err)
	}
	var files []corpusFile
	for _, path := range traceFiles {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		trace, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(corpusDir, name+".want"))
		if err != nil {
			t.Errorf("%s.jsonl has no verdict: %v", name, err)
			continue
		}
		files = append(files, corpusFile{name, trace, strings.Split(strings.TrimSpace(string(want)), "\n")})
	}
	wants, _ := filepath.Glob(filepath.Join(corpusDir, "*.want"))
	for _, path := range wants {
		if _, err := os.Stat(strings.TrimSuffix(path, ".want") + ".jsonl"); err != nil {
			t.Errorf("%s has no trace beside it", filepath.Base(path))
		}
	}
	return files
}

// TestCorpus replays every corpus trace, as written (a stream) and
// rewritten as a document, and compares both verdicts with its .want.
func TestCorpus(t *testing.T) {
	for _, f := range loadCorpus(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel() // Checkers share nothing: -race holds them to it
			stream := replayBytes(t, f.trace)
			if diff := cmp.Diff(f.want, verdict(stream)); diff != "" {
				t.Errorf("verdict (-%s.want +got):\n%s", f.name, diff)
				for _, v := range stream.Violations {
					t.Logf("%s at event %d: %s", v.Kind, v.Event, v.Message)
				}
			}
			checkName(t, f.name, stream)
			r, err := traces.NewReader(bytes.NewReader(f.trace))
			if err != nil {
				t.Fatal(err)
			}
			lent, err := model.Replay(&lender{Reader: r})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(stream, lent); diff != "" {
				t.Errorf("a Lender gives another report (-Next +Lend):\n%s", diff)
			}
			doc := replayBytes(t, asDocument(t, f.trace))
			// Lines differ between the layouts; all else must agree.
			ignoreLines := cmpopts.IgnoreFields(traces.Violation{}, "Line")
			ignoreRelatedLines := cmpopts.IgnoreFields(traces.Related{}, "Line")
			if diff := cmp.Diff(stream, doc, ignoreLines, ignoreRelatedLines); diff != "" {
				t.Errorf("the document layout gives another report (-stream +document):\n%s", diff)
			}
		})
	}
}

// checkName holds a trace to what its name promises.
func checkName(t *testing.T, name string, r traces.Report) {
	t.Helper()
	switch {
	case strings.HasPrefix(name, "clean-"):
		if len(r.Violations) > 0 || !r.Complete {
			t.Errorf("%s is named clean but has %d violations (complete: %t)", name, len(r.Violations), r.Complete)
		}
		return
	case strings.HasPrefix(name, "incomplete-"):
		if len(r.Violations) > 0 || r.Complete {
			t.Errorf("%s is named incomplete but has %d violations (complete: %t)", name, len(r.Violations), r.Complete)
		}
		return
	}
	for _, v := range r.Violations {
		if name == string(v.Kind) || strings.HasPrefix(name, string(v.Kind)+"-") {
			return
		}
	}
	t.Errorf("%s has no violation of the kind its name begins with", name)
}

// TestCorpusCoversEveryKind demands that each violation kind of the
// contract is produced by at least one corpus trace.
func TestCorpusCoversEveryKind(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range loadCorpus(t) {
		for _, line := range f.want {
			seen[strings.Fields(line)[0]] = true
		}
	}
	for _, k := range traces.Kinds() {
		if !seen[string(k)] {
			t.Errorf("no corpus trace expects a %s", k)
		}
	}
}

// TestCorpusCoversEveryOp demands that each op of the table appears in at
// least one corpus trace, so that a new op comes with traces that pin its
// rule.
func TestCorpusCoversEveryOp(t *testing.T) {
	seen := map[traces.Op]bool{}
	for _, f := range loadCorpus(t) {
		r, err := traces.NewReader(bytes.NewReader(f.trace))
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		var ev traces.Event
		for {
			err := r.Next(&ev)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
			seen[ev.Op] = true
		}
	}
	for _, op := range traces.Ops() {
		if !seen[op] {
			t.Errorf("op %s: no corpus trace (traces/testdata/corpus) has it", op)
		}
	}
}

// TestCorpusShowsEveryOpsFree demands, for each op whose row says it
// names things, a clean corpus trace that has it and a trace in which it
// is a use-after-free or a double-free (the op on a thing already dead),
// so that a new op's rule is pinned on both sides of a life's end.
func TestCorpusShowsEveryOpsFree(t *testing.T) {
	clean, dead := map[traces.Op]bool{}, map[traces.Op]bool{}
	for _, f := range loadCorpus(t) {
		var ops []traces.Op
		r, err := traces.NewReader(bytes.NewReader(f.trace))
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		for ev := range events(t, f.name, r) {
			ops = append(ops, ev.Op)
		}
		rep := replayBytes(t, f.trace)
		if len(rep.Violations) == 0 {
			for _, op := range ops {
				clean[op] = true
			}
		}
		for _, v := range rep.Violations {
			if (v.Kind == traces.UseAfterFree || v.Kind == traces.DoubleFree) && v.Event < len(ops) {
				dead[ops[v.Event]] = true
			}
		}
	}
	for _, op := range traces.Ops() {
		if op.Names() == 0 {
			continue
		}
		if !clean[op] {
			t.Errorf("op %s: no clean corpus trace has it (add clean-NAME.jsonl and its .want to traces/testdata/corpus)", op)
		}
		if !dead[op] {
			t.Errorf("op %s: no corpus trace shows it on a dead thing (add use-after-free-NAME.jsonl or double-free-NAME.jsonl and its .want)", op)
		}
	}
}

// events yields the events r reads, failing t on a read error.
func events(t *testing.T, name string, r *traces.Reader) func(func(traces.Event) bool) {
	return func(yield func(traces.Event) bool) {
		var ev traces.Event
		for {
			err := r.Next(&ev)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !yield(ev) {
				return
			}
		}
	}
}

// lender lends events from a Reader, reusing one event as a read-ahead
// buffer would, so that Replay takes its Lend path.
type lender struct {
	*traces.Reader
	ev traces.Event
}

func (l *lender) Lend() (*traces.Event, traces.Pos, error) {
	l.ev = traces.Event{Fields: l.ev.Fields[:0]}
	if err := l.Next(&l.ev); err != nil {
		return nil, traces.Pos{}, err
	}
	return &l.ev, l.Pos(), nil
}

func replayBytes(t *testing.T, data []byte) traces.Report {
	t.Helper()
	r, err := traces.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := model.Replay(r)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// asDocument rewrites a trace in the document layout.
func asDocument(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := traces.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := traces.NewDocumentWriter(&b, r.Header())
	var ev traces.Event
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(b.Bytes()), []byte("{")) || bytes.Count(b.Bytes(), []byte(`"events"`)) != 1 {
		t.Fatalf("the writer did not write a document:\n%s", b.Bytes())
	}
	return b.Bytes()
}

// TestReplayConcurrent: replays on many goroutines at once, which share
// the spare Checkers that replays reuse, give each trace the report it
// gets alone. Run under the race detector, as CI does.
func TestReplayConcurrent(t *testing.T) {
	files := loadCorpus(t)
	alone := make([]traces.Report, len(files))
	for i, f := range files {
		alone[i] = replayBytes(t, f.trace)
	}
	const goroutines, rounds = 4, 3
	var wg sync.WaitGroup
	errs := make(chan string, goroutines*rounds*len(files))
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for k := range files {
					i := (k + g + r) % len(files) // each goroutine in another order
					rep, err := model.Replay(mustStream(files[i].trace))
					if err != nil {
						errs <- files[i].name + ": " + err.Error()
						continue
					}
					if diff := cmp.Diff(alone[i], rep); diff != "" {
						errs <- files[i].name + ": another report when replayed beside others (-alone +concurrent):\n" + diff
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// mustStream reads data as a trace; the corpus is known to be readable.
func mustStream(data []byte) *traces.Reader {
	r, err := traces.NewReader(bytes.NewReader(data))
	if err != nil {
		panic(err)
	}
	return r
}
