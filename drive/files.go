package drive

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/traces"
)

// A calls file holds a program as the protocol sends it, one call a line
// (JSON Lines, without ids), so that `tlcheck fuzz --exec CMD --replay FILE`
// runs it again on any driver, with no generator involved. Blank lines
// and lines starting with # (comments: the failure it shows, how to run
// it) are skipped.

// WriteCalls writes calls as a calls file, with comment lines first.
func WriteCalls(w io.Writer, calls []Call, comments ...string) error {
	var b []byte
	for _, c := range comments {
		for _, line := range strings.Split(strings.TrimRight(c, "\n"), "\n") {
			b = append(b, "# "...)
			b = append(b, line...)
			b = append(b, '\n')
		}
	}
	for i := range calls {
		b = calls[i].AppendJSON(b)
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// WriteTensorCalls writes a layer-5 program as a calls file, with comment
// lines first.
func WriteTensorCalls(w io.Writer, calls []TensorCall, comments ...string) error {
	var b []byte
	for _, c := range comments {
		for _, line := range strings.Split(strings.TrimRight(c, "\n"), "\n") {
			b = append(b, "# "...)
			b = append(b, line...)
			b = append(b, '\n')
		}
	}
	for i := range calls {
		b = calls[i].AppendJSON(b)
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// ReadTensorCalls reads a calls file of a layer-5 program. An error names
// the line.
func ReadTensorCalls(r io.Reader) ([]TensorCall, error) {
	return readCalls(r, []TensorCall{}, ParseTensorCall, func(c *TensorCall) (int, bool) {
		if c.Op.Makes() {
			return c.Handle, c.Op == TensorEnd
		}
		return -1, c.Op == TensorEnd
	}, tensorBounds)
}

// ReadCalls reads a calls file. An error names the line.
func ReadCalls(r io.Reader) ([]Call, error) {
	return readCalls(r, nil, ParseCall, func(c *Call) (int, bool) {
		if callRows[c.Op].fields&cHandle != 0 {
			return c.Handle, c.Op == traces.OpEnd
		}
		return -1, c.Op == traces.OpEnd
	}, callBounds)
}

// A calls file is held to the bounds of what tlcheck takes from a driver
// (PROTOCOL.md, Bounds) before any of it is sent: a program a correct
// runtime cannot answer within them is the file's fault, not the
// driver's, and is refused as input, naming the line that crosses them.
//
// A call of layers 2 and 3 answers its own event and the frees it makes:
// a program's answers hold at most its calls plus the objects it makes,
// and one call (a scope's exit) may free every object the program made,
// in one answer. A layer-5 call answers a few events (a leaf four) and
// its tensor, whose values the answer's line holds.
const (
	maxFileObjects      = maxAnswerEvents - 1 // all freed by one call, with its own event
	maxTensorCalls      = maxProgramEvents / 8
	maxTensorLeafValues = 1 << 14 // about 24 bytes each in an answer line of at most 1 MiB, twice (values, grads)
)

// callBounds checks a program of layers 2 and 3 that has made objects
// so far, its call c the n-th.
func callBounds(c *Call, n, made int) error {
	switch {
	case made > maxFileObjects:
		return fmt.Errorf("the program makes more than %d objects: one call (a scope's exit) may free them all, an answer of more events than tlcheck takes from a driver (%d; PROTOCOL.md, Bounds)", maxFileObjects, maxAnswerEvents)
	case n+made > maxProgramEvents:
		return fmt.Errorf("the program's %d calls and %d objects may answer more events than tlcheck takes in one program (%d; PROTOCOL.md, Bounds)", n, made, maxProgramEvents)
	}
	return nil
}

// tensorBounds checks a layer-5 program likewise.
func tensorBounds(c *TensorCall, n, _ int) error {
	switch {
	case n > maxTensorCalls:
		return fmt.Errorf("the program has more than %d calls, whose answers may hold more events than tlcheck takes in one program (%d; PROTOCOL.md, Bounds)", maxTensorCalls, maxProgramEvents)
	case len(c.Values) > maxTensorLeafValues:
		return fmt.Errorf("a leaf of %d values, more than the %d an answer's line can carry (1 MiB; PROTOCOL.md, Bounds)", len(c.Values), maxTensorLeafValues)
	}
	return nil
}

// maxCallsLine bounds a calls file's line, as an answer's (Config.MaxLine).
const maxCallsLine = 1 << 20

// readCalls reads a calls file, line by line through parse, appending to
// calls: blank lines and lines starting with '#' are skipped. A file is
// one program: a reset (the harness's, not a program's), a call after
// end, a handle given twice or handle 0 (NULL) given to what a call makes
// (made says which handle a call makes, -1 for none, and whether it is
// end), a program beyond the bounds (bounds: of the n-th call, with the
// objects made so far) and a file of no calls are errors. It stops at the
// first, so that a file's size cannot cost more than the bounds.
func readCalls[C any](r io.Reader, calls []C, parse func([]byte) (C, int64, bool, error), made func(*C) (int, bool),
	bounds func(c *C, n, made int) error) ([]C, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxCallsLine)
	n, ended := 0, 0
	given := map[int]int{} // handle -> the line that made it
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		c, _, reset, err := parse(line)
		if err == nil && reset {
			err = fmt.Errorf("reset is the harness's, not a program's call")
		}
		if err == nil && ended > 0 {
			err = fmt.Errorf("a call after end (line %d): a calls file is one program, which end ends", ended)
		}
		if err == nil {
			h, end := made(&c)
			switch {
			case h == 0:
				err = fmt.Errorf("handle 0 is NULL: what a call makes gets a handle from 1")
			case h > 0 && given[h] > 0:
				err = fmt.Errorf("handle %d was given already, on line %d: each call that makes something gets a new handle", h, given[h])
			case h > 0:
				given[h] = n
			}
			if end {
				ended = n
			}
		}
		if err == nil {
			err = bounds(&c, len(calls)+1, len(given))
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("line %d: longer than %d bytes, the most a calls file's line may have (a call is a short line)", n+1, maxCallsLine)
	} else if err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("no calls in %d lines: a calls file holds a program, a call a line", n)
	}
	return calls, nil
}

// WriteTrace writes the run's trace, header first, as JSON Lines: the
// file `tlcheck replay` checks. Of a layer-5 run it leaves out the
// accesses the runtime refused (the last event of a call refused with
// kinds): they did not happen.
func (r *Result) WriteTrace(w io.Writer) error {
	tw := traces.NewWriter(w, r.Header)
	refused := map[int]bool{}
	if r.TensorCalls != nil {
		for _, o := range r.Outcomes {
			if o.Refused && len(o.Kinds) > 0 && o.Events > 0 {
				refused[o.Event+o.Events-1] = true
			}
		}
	}
	for i := range r.Trace {
		if refused[i] {
			continue
		}
		ev := &r.Trace[i]
		if r.TensorCalls == nil {
			ev = r.sited(i)
		}
		if err := tw.Write(ev); err != nil {
			return fmt.Errorf("drive: trace event %d: %w", i, err)
		}
	}
	return tw.Close()
}

// Listing writes the run call by call: each call as sent, then the
// driver's answer (its outcome and events), the failing call marked. It
// is bounded whatever the run, for a person to read: a long run shows its
// first calls, those around the failure and its last, each line clipped
// (a call's name may be 512 KiB), and at most a few events of a call.
func (r *Result) Listing() string {
	var b strings.Builder
	ev := 0
	n := len(r.Calls) + len(r.TensorCalls)
	failed := -1
	if r.Failure != nil {
		failed = r.Failure.Call
	}
	shown := func(i int) bool {
		return n <= listHead+2*listAround+listTail || i < listHead || i >= n-listTail ||
			failed >= 0 && i >= failed-listAround && i <= failed+listAround
	}
	skipped := 0
	for i := range n {
		events := 0
		if i < len(r.Outcomes) {
			events = r.Outcomes[i].Events
		}
		if !shown(i) {
			skipped++
			ev += events
			continue
		}
		if skipped > 0 {
			fmt.Fprintf(&b, "     ... %d calls not shown\n", skipped)
			skipped = 0
		}
		mark := "  "
		if i == failed {
			mark = "=>"
		}
		var call []byte
		if r.TensorCalls != nil {
			call = r.TensorCalls[i].AppendJSON(nil)
		} else {
			call = r.Calls[i].AppendJSON(nil)
		}
		fmt.Fprintf(&b, "%s %3d  %s\n", mark, i, clipText(call))
		if i >= len(r.Outcomes) {
			b.WriteString("         (no answer)\n")
			continue
		}
		o := r.Outcomes[i]
		if o.Refused {
			fmt.Fprintf(&b, "         refused: %s\n", clipText([]byte(o.Message)))
		}
		for k := range o.Events {
			if k == listEvents && o.Events > listEvents+1 {
				fmt.Fprintf(&b, "         ... %d more events\n", o.Events-k)
				ev += o.Events - k
				break
			}
			fmt.Fprintf(&b, "         %s\n", clipText(traces.AppendEvent(nil, &r.Trace[ev])))
			ev++
		}
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "     ... %d calls not shown\n", skipped)
	}
	return b.String()
}

// The bounds of a Listing: the first and last calls shown, those either
// side of the failure, a call's events, a line's bytes.
const (
	listHead, listAround, listTail = 100, 20, 20
	listEvents                     = 40
	listLine                       = 300
)

// clipText cuts a line for a listing to listLine bytes, at a character's
// start, saying how long it was.
func clipText(line []byte) string {
	if len(line) <= listLine {
		return string(line)
	}
	return fmt.Sprintf("%s (%d bytes)", safetext.ClipAt(string(line), listLine), len(line))
}

// Size returns the shrunk program's steps: its generated steps, or for a
// layer-5 program its calls.
func (f *Finding) Size() int {
	if f.Result != nil && f.Result.TensorCalls != nil {
		return len(f.Result.TensorCalls)
	}
	return len(f.Program.Steps)
}

// Files are the paths a finding was written to. Suppress, if the run had
// violations the program explained, is the suppressions file that
// `tlcheck replay --suppressions` takes with the trace (see Result.Suppressions).
type Files struct {
	Calls, Trace, Suppress string
}

// Write writes the finding into dir: base.calls.jsonl, the shrunk calls,
// which `tlcheck fuzz --exec CMD --replay` runs again, and beside it
// base.trace.jsonl, the trace the driver's runtime wrote, which `tlcheck
// replay` checks. It never replaces a file (see atomicfile.CreateNew):
// a taken name gets a number.
func (f *Finding) Write(dir, base string, command string) (Files, error) {
	var calls, trace bytes.Buffer
	fail := f.Failure()
	note := []string{
		fmt.Sprintf("tlcheck-drive counterexample: %s at call %d", fail.What, fail.Call),
		fail.Message,
		fmt.Sprintf("seed %d, program %d, shrunk from %d steps to %d in %d runs", f.Seed, f.Index, f.Steps, f.Size(), f.Shrinks),
	}
	if command != "" {
		note = append(note, "replay: "+harness.Command("fuzz", "--exec", command, "--replay", "THIS-FILE"))
	}
	var err error
	if f.Result.TensorCalls != nil {
		err = WriteTensorCalls(&calls, f.Result.TensorCalls, note...)
	} else {
		err = WriteCalls(&calls, f.Result.Calls, note...)
	}
	if err != nil {
		return Files{}, err
	}
	if err := f.Result.WriteTrace(&trace); err != nil {
		return Files{}, err
	}
	var out Files
	if out.Calls, err = atomicfile.CreateNew(dir, base, ".calls.jsonl", calls.Bytes()); err != nil {
		return Files{}, fmt.Errorf("drive: writing the calls: %w", err)
	}
	stem := strings.TrimSuffix(out.Calls, ".calls.jsonl")
	if out.Trace, err = atomicfile.CreateNew(filepath.Dir(stem), filepath.Base(stem), ".trace.jsonl", trace.Bytes()); err != nil {
		return out, fmt.Errorf("drive: writing the trace: %w", err)
	}
	if sup := f.Result.Suppressions(); sup != "" {
		if out.Suppress, err = atomicfile.CreateNew(filepath.Dir(stem), filepath.Base(stem), ".suppress", []byte(sup)); err != nil {
			return out, fmt.Errorf("drive: writing the suppressions: %w", err)
		}
	}
	return out, nil
}
