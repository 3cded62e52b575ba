package drive

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
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
	return readCalls(r, []TensorCall{}, ParseTensorCall)
}

// ReadCalls reads a calls file. An error names the line.
func ReadCalls(r io.Reader) ([]Call, error) {
	return readCalls(r, nil, ParseCall)
}

// readCalls reads a calls file, line by line through parse, appending to
// calls: blank lines and lines starting with '#' are skipped, and a reset
// (the harness's, not a program's) is an error.
func readCalls[C any](r io.Reader, calls []C, parse func([]byte) (C, int64, bool, error)) ([]C, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
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
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
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
// driver's answer (its outcome and events), the failing call marked.
func (r *Result) Listing() string {
	var b strings.Builder
	ev := 0
	n := len(r.Calls) + len(r.TensorCalls)
	for i := range n {
		mark := "  "
		if r.Failure != nil && r.Failure.Call == i {
			mark = "=>"
		}
		var call []byte
		if r.TensorCalls != nil {
			call = r.TensorCalls[i].AppendJSON(nil)
		} else {
			call = r.Calls[i].AppendJSON(nil)
		}
		fmt.Fprintf(&b, "%s %3d  %s\n", mark, i, call)
		if i >= len(r.Outcomes) {
			b.WriteString("         (no answer)\n")
			continue
		}
		o := r.Outcomes[i]
		if o.Refused {
			fmt.Fprintf(&b, "         refused: %s\n", o.Message)
		}
		for k := 0; k < o.Events; k++ {
			fmt.Fprintf(&b, "         %s\n", traces.AppendEvent(nil, &r.Trace[ev]))
			ev++
		}
	}
	return b.String()
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
		note = append(note, "replay: tlcheck fuzz --exec "+shellQuote(command)+" --replay THIS-FILE")
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

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
