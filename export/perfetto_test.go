package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/internal/tracetest"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// The Perfetto export held to the model: each test replays the trace
// against package model too and checks the timeline against its report,
// with the pid and tids the export places its events at.

// traceEvent is an event of the Chrome trace-event format, as the viewers
// read it.
type traceEvent struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	ID   *int           `json:"id"`
	TS   *float64       `json:"ts"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	S    string         `json:"s"`
	Args map[string]any `json:"args"`
}

type chromeTrace struct {
	TraceEvents     []traceEvent   `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	OtherData       map[string]any `json:"otherData"`
}

// checkChromeTrace checks what a viewer relies on and what the export
// promises, against the replay's report: every slice begins once and ends
// once, no earlier, one per thing made; the counters peak at the model's
// peak; one instant event per violation, of its kind.
func checkChromeTrace(tr chromeTrace, rep traces.Report) error {
	begins := map[int]traceEvent{}
	ends := map[int]int{}
	live := map[string]float64{}
	var peak float64
	var kinds []string
	var last float64
	for i, ev := range tr.TraceEvents {
		if ev.Ph != "M" && ev.TS == nil {
			return fmt.Errorf("event %d (%s) has no ts", i, ev.Ph)
		}
		if ev.Pid != perfettoPid {
			return fmt.Errorf("event %d has pid %d", i, ev.Pid)
		}
		if ev.TS != nil {
			if *ev.TS < last && ev.Ph != "e" { // an unfreed due object ends at its call
				return fmt.Errorf("event %d (%s): ts %v after %v", i, ev.Ph, *ev.TS, last)
			}
			last = max(last, *ev.TS)
		}
		switch ev.Ph {
		case "b":
			if ev.ID == nil || ev.Tid != perfettoLivesTid {
				return fmt.Errorf("event %d: a slice without id or on another thread", i)
			}
			if _, dup := begins[*ev.ID]; dup {
				return fmt.Errorf("slice %d begins twice", *ev.ID)
			}
			begins[*ev.ID] = ev
		case "e":
			b, ok := begins[*ev.ID]
			switch {
			case !ok:
				return fmt.Errorf("slice %d ends before it begins", *ev.ID)
			case b.Name != ev.Name || b.Cat != ev.Cat:
				return fmt.Errorf("slice %d begins as %q/%q and ends as %q/%q", *ev.ID, b.Name, b.Cat, ev.Name, ev.Cat)
			case *ev.TS < *b.TS:
				return fmt.Errorf("slice %d ends at %v, before it begins at %v", *ev.ID, *ev.TS, *b.TS)
			}
			ends[*ev.ID]++
		case "C":
			if ev.Name == "device allocated bytes" {
				break // the pool blocks' bytes: inside the reserved ones, not beside them
			}
			live[ev.Name] = ev.Args["bytes"].(float64)
			sum := 0.0
			for _, v := range live {
				sum += v
			}
			peak = max(peak, sum)
		case "i":
			if ev.Args["kind"] != ev.Name || ev.Args["message"] == "" || ev.Tid != perfettoViolationsTid {
				return fmt.Errorf("event %d: a violation without kind or message: %+v", i, ev)
			}
			if len(kinds) >= len(rep.Violations) {
				return fmt.Errorf("event %d: more violations than the model's %d", i, len(rep.Violations))
			}
			v := rep.Violations[len(kinds)]
			if h, _ := ev.Args["history"].([]any); len(h) != len(v.Related) {
				return fmt.Errorf("event %d: a history of %d events, the violation's has %d", i, len(h), len(v.Related))
			}
			kinds = append(kinds, ev.Name)
		}
	}
	if len(begins) != rep.Objects {
		return fmt.Errorf("%d slices, but the model made %d things", len(begins), rep.Objects)
	}
	for id := range begins {
		if ends[id] != 1 {
			return fmt.Errorf("slice %d ends %d times", id, ends[id])
		}
	}
	if uint64(peak) != rep.PeakLiveBytes {
		return fmt.Errorf("the counters peak at %v bytes, the model at %d", peak, rep.PeakLiveBytes)
	}
	var want []string
	for _, v := range rep.Violations {
		want = append(want, string(v.Kind))
	}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		return fmt.Errorf("violations %v, the model's %v", kinds, want)
	}
	if tr.OtherData["violations"] != float64(len(rep.Violations)) {
		return fmt.Errorf("otherData says %v violations", tr.OtherData["violations"])
	}
	return nil
}

// perfettoOf exports trace as a Perfetto timeline and returns it, the
// export's summary and the model's report on the same trace.
func perfettoOf(t *testing.T, trace string) (string, *Summary, traces.Report) {
	t.Helper()
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatalf("%v\n%s", err, trace)
	}
	var out bytes.Buffer
	sum, err := Write(&out, Perfetto, r, Options{Name: "test"})
	if err != nil {
		t.Fatalf("export: %v\n%s", err, trace)
	}
	r, err = traces.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := model.Replay(r)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, trace)
	}
	return out.String(), sum, rep
}

func TestExportPerfetto(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		ts    []float64 // the times of the first slices' begins, if checked
	}{
		{"stale reuse", staleReuse, []float64{1, 4}},
		{"clean document", cleanDoc, []float64{0}},
		{"double free without end", doubleFreeNoEnd, nil},
		{"times in ns become µs", timedClean, []float64{1.5, 2.5}},
		{"missed free (effects)", `{"format":"tlcheck-trace","version":1,"effects":true}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:2"}
{"op":"scope_exit"}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x2000","size":32}
{"op":"param_register","name":"w","addr":"0x2000"}
{"op":"scope_exit"}
{"op":"end"}
`, []float64{1, 4}},
		{"device and pool", `{"format":"tlcheck-trace","version":1}
{"op":"dev_malloc","addr":"0x7000","size":4096}
{"op":"pool_get","addr":"0x7000","size":64,"site":"k.cu:1"}
{"op":"pool_get","addr":"0x7100","size":64}
{"op":"dev_free","addr":"0x7000"}
{"op":"pool_put","addr":"0x7100"}
{"op":"fn_enter","slots":2}
{"op":"arena_get","slot":0,"addr":"0x100","size":16}
{"op":"end"}
`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, sum, rep := perfettoOf(t, tc.trace)
			if sum.Violations != len(rep.Violations) {
				t.Errorf("the summary counts %d violations, the model %d", sum.Violations, len(rep.Violations))
			}
			var tr chromeTrace
			if err := json.Unmarshal([]byte(stdout), &tr); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			if err := checkChromeTrace(tr, rep); err != nil {
				t.Errorf("%v\n%s", err, stdout)
			}
			if timed := strings.Contains(tc.trace, `"t":`); (tr.DisplayTimeUnit == "ns") != timed {
				t.Errorf("displayTimeUnit %q for a trace with times: %v", tr.DisplayTimeUnit, timed)
			}
			var got []float64
			for _, ev := range tr.TraceEvents {
				if ev.Ph == "b" && len(got) < len(tc.ts) {
					got = append(got, *ev.TS)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.ts[:len(got)]) || len(got) != len(tc.ts) {
				t.Errorf("slices begin at %v, want %v", got, tc.ts)
			}
		})
	}
}

// TestExportPerfettoCheckFails feeds checkChromeTrace broken exports: a
// check that cannot fail checks nothing.
func TestExportPerfettoCheckFails(t *testing.T) {
	stdout, _, rep := perfettoOf(t, staleReuse)
	breaks := []struct {
		name   string
		break_ func(tr *chromeTrace)
	}{
		{"an end dropped", func(tr *chromeTrace) {
			for i, ev := range tr.TraceEvents {
				if ev.Ph == "e" {
					tr.TraceEvents = append(tr.TraceEvents[:i], tr.TraceEvents[i+1:]...)
					return
				}
			}
		}},
		{"a counter off", func(tr *chromeTrace) {
			for i, ev := range tr.TraceEvents {
				if ev.Ph == "C" {
					tr.TraceEvents[i].Args = map[string]any{"bytes": float64(65)}
					return
				}
			}
		}},
		{"a violation dropped", func(tr *chromeTrace) {
			for i, ev := range tr.TraceEvents {
				if ev.Ph == "i" {
					tr.TraceEvents = append(tr.TraceEvents[:i], tr.TraceEvents[i+1:]...)
					return
				}
			}
		}},
	}
	for _, b := range breaks {
		var tr chromeTrace
		if err := json.Unmarshal([]byte(stdout), &tr); err != nil {
			t.Fatal(err)
		}
		b.break_(&tr)
		if err := checkChromeTrace(tr, rep); err == nil {
			t.Errorf("%s: the check passed", b.name)
		}
	}
}

// TestExportPerfettoStreams feeds a long trace through a pipe and checks
// that the export comes out while the trace is still coming in: it is
// written as the events are replayed, not held until the end.
func TestExportPerfettoStreams(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close() // on a failure too, so that the export ends
	outR, outW := io.Pipe()
	done := make(chan error)
	go func() {
		r, err := traces.NewReader(pr)
		if err == nil {
			_, err = Write(outW, Perfetto, r, Options{Name: "stream"})
		}
		outW.Close()
		done <- err
	}()
	// Read the output as it comes, counting its lines.
	var lines atomic.Int64
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines.Add(1)
		}
	}()
	w := bufio.NewWriter(pw)
	fmt.Fprintln(w, `{"format":"tlcheck-trace","version":1}`)
	const events = 200_000
	for i := range events / 2 {
		fmt.Fprintf(w, "{\"op\":\"malloc\",\"addr\":%d,\"size\":8}\n{\"op\":\"free\",\"addr\":%d}\n", 16+i%64*16, 16+i%64*16)
	}
	w.Flush()
	// The whole trace has been read (the pipe holds nothing), but it has
	// not ended: most of the export must be out already (4 lines an event
	// pair: b, C, e, C).
	deadline := time.Now().Add(60 * time.Second)
	for lines.Load() < events {
		select {
		case <-scanned:
			t.Fatal("the export ended before the trace did")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d lines out after the trace's %d events went in", lines.Load(), events)
		}
		time.Sleep(10 * time.Millisecond)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Errorf("export: %v", err)
	}
	<-scanned
}

// Fixtures, as the command's tests have them.

const staleReuse = tracetest.StaleReuse

const cleanDoc = tracetest.CleanDoc

const doubleFreeNoEnd = tracetest.DoubleFreeNoEnd

const timedClean = tracetest.TimedClean
