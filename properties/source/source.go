package source

import (
	"fmt"
	"io"
	"slices"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/traces"
)

// Source property names.
const (
	PropTrace = "source-trace"
	PropAlive = "source-alive"
)

// Failure is a source program that broke a property.
type Failure struct {
	Program  *lang.Program
	Property string
	Message  string
	Trace    []traces.Event // what the runtime recorded, under impl.Header()
	Report   traces.Report  // the model's replay of Trace
}

func (f *Failure) Error() string {
	return fmt.Sprintf("%s: %s", f.Property, f.Message)
}

// Events is the length of the failing run's trace.
func (f *Failure) Events() int { return len(f.Trace) }

// WriteTrace writes the failing run's trace as JSON Lines, the file
// `tlcheck replay` reads.
func (f *Failure) WriteTrace(w io.Writer) error {
	return harness.WriteTrace(w, impl.Header(), f.Trace)
}

// Run lowers p onto a runtime configured by cfg (its faults, codegen
// ones included, are the lowering's and the runtime's) and checks both
// source properties; nil if they hold. An ill-formed program is a
// failure of neither: it is reported as an error.
func Run(p *lang.Program, cfg impl.Config) (*Failure, error) {
	want, err := lang.Interpret(p)
	if err != nil {
		return nil, err
	}
	var rec impl.Recording
	cfg.Record = rec.Record
	got, err := lang.Lower(p, impl.New(cfg))
	if err != nil {
		return nil, err
	}
	rep, err := model.Replay(&eventLender{events: rec.Events()})
	if err != nil {
		return nil, fmt.Errorf("properties: replaying the lowered run: %w", err)
	}
	fail := func(prop, msg string) *Failure {
		return &Failure{Program: p, Property: prop, Message: msg, Trace: slices.Clone(rec.Events()), Report: rep}
	}
	if len(rep.Violations) > 0 {
		v := rep.Violations[0]
		return fail(PropTrace, fmt.Sprintf("the trace shows %s at event %d: %s", v.Kind, v.Event, v.Message)), nil
	}
	for i := range max(len(want), len(got.Alive)) {
		if i >= len(want) || i >= len(got.Alive) {
			return fail(PropAlive, fmt.Sprintf("the lowered run passed %d statements, the program %d", len(got.Alive), len(want))), nil
		}
		if !slices.Equal(want[i], got.Alive[i]) {
			return fail(PropAlive, fmt.Sprintf("after statement %d (in the order run) the runtime holds objects %v, the program %v",
				i+1, got.Alive[i], want[i])), nil
		}
	}
	return nil, nil
}

// Shrink shrinks a failing source program (lang.Shrink) to a
// smaller one that still breaks a property against cfg and passes against
// the same runtime without cfg's faults, and returns it with its failure.
func Shrink(p *lang.Program, cfg impl.Config) (*lang.Program, *Failure) {
	clean := cfg
	clean.Faults = nil
	fails := func(q *lang.Program) bool {
		f, err := Run(q, cfg)
		if err != nil || f == nil {
			return false
		}
		if len(cfg.Faults) > 0 {
			g, err := Run(q, clean)
			return err == nil && g == nil
		}
		return true
	}
	small := lang.Shrink(p, fails)
	f, _ := Run(small, cfg)
	return small, f
}

// eventLender lends recorded events in place, one at a time: model.Replay
// then reads them without the read-ahead it gives a plain Source, whose
// goroutine costs more than a source program's short trace.
type eventLender struct {
	events []traces.Event
	next   int
}

func (l *eventLender) Header() traces.Header { return impl.Header() }

func (l *eventLender) Next(ev *traces.Event) error {
	p, _, err := l.Lend()
	if err == nil {
		*ev = *p
	}
	return err
}

func (l *eventLender) Lend() (*traces.Event, traces.Pos, error) {
	if l.next >= len(l.events) {
		return nil, l.Pos(), io.EOF
	}
	l.next++
	return &l.events[l.next-1], l.Pos(), nil
}

func (l *eventLender) Pos() traces.Pos { return traces.Pos{Event: l.next - 1} }
