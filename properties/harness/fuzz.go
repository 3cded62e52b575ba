package harness

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/internal/plural"
)

// Options are one fuzz run's settings (see Fuzz).
type Options struct {
	Seed  uint64
	Time  time.Duration // how long to search
	Out   string        // the directory the counterexample goes to
	Fault string        // the fault switched on, "" for none: named in the report and the file
	// Stdout takes the report, Stderr what went wrong around it.
	Stdout, Stderr io.Writer
	// Progress, where set, is shown "N programs, R/s" while the search
	// runs (a terminal).
	Progress io.Writer
	// Save writes the counterexample's files; nil is Save, the package's.
	Save func(dir, base, ext string, data []byte) (string, error)
}

// Outcome is how a fuzz run ended. Its values are the exit codes of
// tlcheck's contract (0 clean, 1 a counterexample, 2 unusable input), so
// that a command returns int(outcome).
type Outcome int

const (
	Clean   Outcome = iota // no program failed
	Found                  // a program failed: reported, and saved unless the report says otherwise
	Trouble                // the counterexample could not be made (the error is on Stderr)
)

// Fuzz is the fuzz command's pipeline over the language l, whose faults
// are opts.Fault's: it searches for opts.Time, shrinks the first failure,
// saves its trace (and, for a language with an Ext, its program beside
// it) into opts.Out under a name that says the fault and seed, and
// prints the report with the reproduce line. The trace is also printed,
// so that it is never lost: a write that fails is said on Stderr, and
// the run is still Found.
func Fuzz[P any](l Language[P], opts Options) Outcome {
	start := time.Now()
	prog := NewProgress(opts.Progress, start)
	p, f, n := Search(l, opts.Seed, func(n int) bool {
		prog.Update(n)
		return time.Since(start) < opts.Time
	})
	elapsed := time.Since(start)
	prog.Done()
	what := l.Against
	if opts.Fault != "" {
		what += " with fault " + opts.Fault
	}
	w := opts.Stdout
	if f == nil {
		fmt.Fprintf(w, "tlcheck fuzz: %s against %s in %s (%s), seed %d: no failure\n",
			plural.Count(n, l.Noun), what, elapsed.Round(time.Millisecond), plural.Rate(float64(n)/elapsed.Seconds(), "program"), opts.Seed)
		return Clean
	}
	small, sf := Shrink(l, p, f)
	var trace bytes.Buffer
	if sf.Trace != nil {
		if err := sf.Trace(&trace); err != nil {
			fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
			return Trouble
		}
	}
	save := opts.Save
	if save == nil {
		save = Save
	}
	label := l.Label
	if opts.Fault != "" {
		label = opts.Fault
	}
	// The directory was checked, but it may have gone since: then the
	// trace printed below is the only copy, and the error says so.
	path, werr := save(opts.Out, "tlcheck-"+label+"-seed"+strconv.FormatUint(opts.Seed, 10), ".jsonl", trace.Bytes())
	var progPath string
	if werr == nil && l.Ext != "" {
		// Named as the trace is, so the two go together even when the
		// trace's name had to take a number.
		progPath, werr = save(opts.Out, strings.TrimSuffix(filepath.Base(path), ".jsonl"), l.Ext,
			[]byte(l.Head(opts.Seed, opts.Fault, sf.Property)+l.List(small)))
	}
	if werr != nil {
		what := "the trace"
		if l.Ext != "" {
			what = "the counterexample"
		}
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: writing %s: %v; it is printed on standard output instead\n", what, werr)
	}
	fmt.Fprintf(w, "tlcheck fuzz: %s %d of seed %d failed against %s after %s\n", l.Noun, n, opts.Seed, what, elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "property broken: %s", sf.Property)
	if len(sf.Also) > 0 {
		fmt.Fprintf(w, " (also: %s)", strings.Join(sf.Also, ", "))
	}
	fmt.Fprintf(w, "\n%s\n\n%s", sf.Message, sf.Notes)
	fmt.Fprintf(w, "shrunk from %s to %d:\n%s\n", plural.Count(l.Len(p), l.Step), l.Len(small), l.List(small))
	events := plural.Count(sf.Events, "event")
	switch {
	case werr != nil && l.Ext != "":
		fmt.Fprintf(w, "trace (%s), NOT written (%v):\n%s\n", events, werr, trace.String())
		return Found
	case werr != nil:
		fmt.Fprintf(w, "trace (%s), NOT written (%v); save it to a file to replay it:\n%s\n", events, werr, trace.String())
		fmt.Fprintln(w, Reproduce("replay", "FILE"))
		return Found
	case l.Ext != "":
		fmt.Fprintf(w, "program written to %s\n", progPath)
	}
	fmt.Fprintf(w, "trace (%s), written to %s:\n%s\n", events, path, trace.String())
	fmt.Fprintln(w, Reproduce("replay", path))
	if l.Ext != "" {
		fmt.Fprintf(w, "check the program again after a change: %s\n", Command(l.Again(progPath, opts.Fault)...))
	}
	return Found
}

// Recheck runs the program saved in path (as Fuzz saves one, a listing
// l.Parse reads) once more, against the code as it is today, and
// reports as Fuzz would. A file that cannot be read or is no program of
// l is Trouble, said on opts.Stderr.
func Recheck[P any](l Language[P], path string, opts Options) Outcome {
	text, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --replay: %v\n", err)
		return Trouble
	}
	p, err := l.Parse(string(text))
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %s: %v\n", path, err)
		return Trouble
	}
	what := l.Against
	if opts.Fault != "" {
		what += " with fault " + opts.Fault
	}
	f := l.Run(p)
	if f == nil {
		fmt.Fprintf(opts.Stdout, "tlcheck fuzz: %s (%s) against %s: no failure\n", path, plural.Count(l.Len(p), l.Step), what)
		return Clean
	}
	fmt.Fprintf(opts.Stdout, "tlcheck fuzz: %s failed against %s\nproperty broken: %s\n%s\n\n%s", path, what, f.Property, f.Message, l.List(p))
	return Found
}

// Progress writes "N programs, R/s" to a terminal a few times a second
// while a search runs; with no terminal it writes nothing.
type Progress struct {
	w     io.Writer
	start time.Time
	next  time.Time
	shown bool
}

// NewProgress returns a Progress writing to w, counted from start; a nil
// w shows nothing.
func NewProgress(w io.Writer, start time.Time) *Progress {
	if w == nil {
		return &Progress{}
	}
	return &Progress{w: w, start: start, next: start.Add(250 * time.Millisecond)}
}

// Update shows that n programs ran, at most four times a second.
func (p *Progress) Update(n int) {
	if p.w == nil || n%64 != 0 {
		return
	}
	if now := time.Now(); now.After(p.next) {
		p.next = now.Add(250 * time.Millisecond)
		fmt.Fprintf(p.w, "\r%s, %.0f/s ", plural.Count(n, "program"), float64(n)/now.Sub(p.start).Seconds())
		p.shown = true
	}
}

// Done clears the line, if anything was shown.
func (p *Progress) Done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
