// Command traced is the program of the example CI gate
// (examples/ci/tlcheck-gate.sh): a few steps of a training loop on the Go
// runtime of impl/, each run recording its trace, as a runtime under test
// would in its own CI. It writes one trace per run into -out:
//
//	step.jsonl   a forward step: a value returned from a function, kept in
//	             a struct next to a parameter; clean
//	cache.jsonl  a step that fills a cache and never empties it: a leak the
//	             example's baseline accepts
//
// Every event carries the site of the call that made it (file:line of
// this file, relative to the repository), so that the gate's fingerprints
// and the SARIF locations point at real source. -fault switches on a bug
// of the runtime's catalogue (tlcheck faults lists them), which the gate
// must then catch as a new finding.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/traces"
)

func main() {
	out := flag.String("out", "", "the folder to write the traces into (it must exist)")
	fault := flag.String("fault", "", "a fault of the runtime's catalogue to switch on")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: traced -out DIR [-fault NAME]")
		os.Exit(2)
	}
	var faults []impl.Fault
	if *fault != "" {
		if info, ok := impl.LookupFault(*fault); !ok || info.Engine != impl.EngineProgram {
			fmt.Fprintf(os.Stderr, "traced: %q is no fault of the runtime (tlcheck faults lists them; only the program engine's apply)\n", *fault)
			os.Exit(2)
		}
		faults = []impl.Fault{impl.Fault(*fault)}
	}
	for _, prog := range []struct {
		name string
		run  func(*tracer)
	}{{"step.jsonl", step}, {"cache.jsonl", cache}} {
		if err := record(filepath.Join(*out, prog.name), faults, prog.run); err != nil {
			fmt.Fprintf(os.Stderr, "traced: %v\n", err)
			os.Exit(2)
		}
	}
}

// tracer runs a program on the runtime and stamps each event with the
// site of the call that made it.
type tracer struct {
	rt   *impl.Runtime
	site string
}

// at notes the caller's line as the site of the events to come. The
// runtime's own errors are not this program's concern: the trace is, and
// the gate judges it.
func (t *tracer) at() *impl.Runtime {
	_, file, line, _ := runtime.Caller(1)
	t.site = fmt.Sprintf("%s:%d", repoPath(file), line)
	return t.rt
}

// record runs prog and writes its trace to path, whole and atomically.
func record(path string, faults []impl.Fault, prog func(*tracer)) error {
	var buf bytes.Buffer
	tw := traces.NewWriter(&buf, impl.Header())
	t := &tracer{}
	t.rt = impl.New(impl.Config{Faults: faults, Record: func(ev traces.Event) {
		ev.Site = t.site
		_ = tw.Write(&ev) // sticky: checked at Close
	}})
	prog(t)
	if err := tw.Close(); err != nil {
		return err
	}
	return atomicfile.Replace(path, buf.Bytes())
}

// step: fn main() { let w = zeros(); params.w = w; let t = make();
// let s = Pair { a: w, b: t }; } with fn make() { let t = ones(); t }.
func step(t *tracer) {
	t.at().ScopeEnter()
	w, _ := t.at().Alloc(64)
	t.at().ParamRegister("w", w)

	t.at().ScopeEnter()
	x, _ := t.at().Alloc(64)
	t.at().Unregister(x) // returned: moved out of make's scope
	t.at().ScopeExit()

	t.at().Register(x)
	t.at().StructInit(32, []traces.Addr{w, x})
	t.at().ScopeExit()

	t.at().ParamRelease("w")
	t.at().End()
}

// cache: each step's activations are kept in a cache by an extra count
// that nothing ever drops: the leak the baseline accepts.
func cache(t *tracer) {
	for range 2 {
		t.at().ScopeEnter()
		a, _ := t.at().Alloc(256)
		t.at().Acquire(a) // the cache's reference, never released
		t.at().ScopeExit()
	}
	t.at().End()
}

// repoPath is file relative to the repository, so that no machine's
// folders end up in a trace; with -trimpath, file is already a module
// path and this file's own path locates the module's root the same way.
func repoPath(file string) string {
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(self)))) // examples/ci/traced/main.go
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return filepath.Base(file)
	}
	return filepath.ToSlash(rel)
}
