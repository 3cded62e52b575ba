package hunt

import (
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry/lincheck"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/properties/pool"
	"github.com/tlcheck/tlcheck/properties/source"
)

// Options says how long to hunt and from which seed.
type Options struct {
	Budget time.Duration // per fault: the search and the shrink
	Seed   uint64        // the seed of the programs
}

// The units of a counterexample's size (Result.Unit), by engine.
const (
	UnitEvents     = "events"     // a trace's events: the program engine
	UnitStatements = "statements" // a source program's statements
	UnitCalls      = "calls"      // a pool program's calls, a history's calls
	UnitSteps      = "steps"      // an autograd program's steps
)

// Result is one fault's hunt, in the JSON shape of `tlcheck selftest
// --json`.
type Result struct {
	Name    string  `json:"name"`
	Engine  string  `json:"engine"`
	Caught  bool    `json:"caught"`
	Seconds float64 `json:"seconds"` // to a shrunk counterexample: search and shrink
	// Size is the shrunk counterexample's size in Unit, its engine's unit
	// (events, statements, calls or steps); 0 if not caught.
	Size int    `json:"size"`
	Unit string `json:"unit"`
	// Counterexample is the shrunk counterexample itself: a trace (JSON
	// Lines) for a program fault, the source program, the pool or
	// autograd program listing, the history; "" if not caught.
	Counterexample string `json:"counterexample"`
	// Events is the counterexample's trace length; for a registry fault,
	// whose history has no trace, its calls.
	Events int `json:"events"`
	// Also names the other engines that caught it too (impl.FaultInfo.Also).
	Also []string `json:"also,omitempty"`

	// Property names the properties it broke, the first to break first.
	Property string `json:"-"`
	Programs int    `json:"-"` // programs run; for a registry fault, histories checked

	// Source is the shrunk source program of a runtime fault that source
	// programs caught too, AlsoProperty the property it broke.
	Source       string `json:"-"`
	Statements   int    `json:"-"`
	AlsoProperty string `json:"-"`
}

// An engine hunts the faults of its rows of impl.Catalog
// (FaultInfo.Engine) with programs of its own: search is given the faults
// to switch on (none for the control), the seed and how long it may go
// on, and returns what it found, in unit, with Caught set where a property
// broke for the faults' sake (with no fault: where the control failed).
// Every engine but the registry's is a program language (see hunter).
type engine struct {
	name   string
	unit   string
	search func(faults []impl.Fault, seed uint64, more func(int) bool) Result
	// control names the engine in a failure of the control; half halves
	// its budget there (flat and source programs share one); tally adds
	// the control's run to c.
	control string
	half    bool
	tally   func(c *Control, r Result)
	// missing names the fields its language lacks (harness.Language.Missing).
	missing func() []string
}

// engines holds one engine for each of impl.Catalog, in the order the
// control runs them: a program language is one line. TestHuntsEveryEngine
// fails, naming the engine, for one missing here.
var engines = []engine{
	hunter(properties.FlatLanguage, "", true, func(c *Control, r Result) { c.Programs, c.Seconds = c.Programs+r.Programs, c.Seconds+r.Seconds }),
	hunter(source.Language, "", true, func(c *Control, r Result) { c.Programs, c.Seconds = c.Programs+r.Programs, c.Seconds+r.Seconds }),
	{name: impl.EngineRegistry, unit: UnitCalls, search: registry, missing: func() []string { return nil },
		tally: func(c *Control, r Result) { c.Histories, c.HistSeconds = r.Programs, r.Seconds }},
	hunter(pool.Language, "the GPU allocators: ", false, func(c *Control, r Result) { c.Pool = r.Programs }),
	hunter(properties.AutogradLanguage, "the autograd engine: ", false, func(c *Control, r Result) { c.Autograd = r.Programs }),
	hunter(long, "drive's long programs: ", false, func(c *Control, r Result) { c.Long = r.Programs }),
}

// hunter is the engine of the language lang makes: it hunts with the
// harness's Search, shrinks the failure with its Shrink, and counts the
// fault caught where the shrunk program passes without it.
func hunter[P any](lang func(faults []impl.Fault) harness.Language[P], control string, half bool, tally func(*Control, Result)) engine {
	l := lang(nil)
	return engine{name: l.Name, unit: l.Unit, control: control, half: half, tally: tally, missing: l.Missing,
		search: func(faults []impl.Fault, seed uint64, more func(int) bool) Result {
			l := lang(faults)
			p, f, n := harness.Search(l, seed, more)
			r := Result{Programs: n}
			if f == nil {
				return r
			}
			small, sf := harness.Shrink(l, p, f)
			r.Counterexample, r.Size = l.Counterexample(small, sf)
			r.Events, r.Property = sf.Events, sf.Broke()
			if sf.Kind != "" {
				r.Property += " (" + sf.Kind + ")"
			}
			// A property broke for the fault's sake: the shrunk program
			// passes without it (with no fault, that is the control
			// failing).
			r.Caught = len(faults) == 0 || lang(nil).Run(small) == nil
			return r
		}}
}

// engineNamed returns the engine called name, if there is one.
func engineNamed(name string) (engine, bool) {
	for _, en := range engines {
		if en.name == name {
			return en, true
		}
	}
	return engine{}, false
}

// hunt runs the engine's search with faults on for opts.Budget, and
// times it.
func (en engine) hunt(faults []impl.Fault, opts Options) Result {
	start := time.Now()
	r := en.search(faults, opts.Seed, func(int) bool { return time.Since(start) < opts.Budget })
	r.Unit, r.Seconds = en.unit, time.Since(start).Seconds()
	return r
}

// Fault hunts f with its engine; a fault no engine hunts is reported not
// caught, and says so. A runtime fault that source programs catch too
// (FaultInfo.Also) is hunted with them as well.
func Fault(f impl.FaultInfo, opts Options) Result {
	en, ok := engineNamed(f.Engine)
	if !ok {
		return Result{Name: string(f.Name), Engine: f.Engine, Property: "no engine hunts " + f.Engine + " faults"}
	}
	faults := []impl.Fault{f.Name}
	r := en.hunt(faults, opts)
	r.Name, r.Engine = string(f.Name), f.Engine
	if src, _ := engineNamed(impl.EngineSource); f.Engine != src.name && f.CaughtBy(src.name) {
		if sr := src.hunt(faults, opts); sr.Caught {
			r.Also, r.Source, r.Statements, r.AlsoProperty = append(r.Also, impl.EngineSource), sr.Counterexample, sr.Size, sr.Property
		}
	}
	return r
}

// Control is the correct code's run: the runtime with flat and source
// programs, the allocators, the registry and the autograd engine.
type Control struct {
	Failed      bool
	Property    string  // what failed, if anything did
	Programs    int     // flat and source programs the correct runtime ran
	Seconds     float64 // and their seconds
	Histories   int     // histories the correct registry passed
	HistSeconds float64
	Pool        int // pool programs the correct allocators ran
	Autograd    int // autograd programs the correct engine ran
	Long        int // drive's long programs the correct runtime ran
}

// RunControl runs the correct code for opts.Budget, at most a second, of
// each engine (flat and source programs share theirs). The first engine
// to fail names what failed.
func RunControl(opts Options) Control {
	each := Options{Seed: opts.Seed, Budget: min(opts.Budget, time.Second)}
	half := Options{Seed: opts.Seed, Budget: each.Budget / 2}
	var c Control
	for _, en := range engines {
		budget := each
		if en.half {
			budget = half
		}
		r := en.hunt(nil, budget)
		if r.Caught && !c.Failed {
			c.Failed, c.Property = true, en.control+r.Property
		}
		en.tally(&c, r)
	}
	return c
}

// Report is every fault's hunt and the control's run.
type Report struct {
	Options Options
	Faults  []Result
	Control Control
}

// All hunts every fault of impl.Catalog, then runs the control.
func All(opts Options) Report {
	rep := Report{Options: opts}
	for _, f := range impl.Catalog() {
		rep.Faults = append(rep.Faults, Fault(f, opts))
	}
	rep.Control = RunControl(opts)
	return rep
}

// OK reports whether every fault was caught and the control passed.
func (r Report) OK() bool {
	if r.Control.Failed {
		return false
	}
	for _, f := range r.Faults {
		if !f.Caught {
			return false
		}
	}
	return true
}

// registry runs concurrent histories of impl/registry with faults on
// until one is not linearizable or the budget is spent, then searches
// smaller workloads for a shorter one. A concurrent history cannot be
// replayed as a program can, so the control (the same seeds on the
// correct registry) is what shows the fault is to blame.
func registry(faults []impl.Fault, seed uint64, more func(int) bool) Result {
	cfg := lincheck.Config{Seed: seed, Faults: faults}
	res, n, err := lincheck.Hunt(cfg, more)
	r := Result{Programs: n}
	switch {
	case err != nil:
		r.Property = err.Error()
	case res.Verdict == lincheck.Illegal:
		if len(faults) > 0 {
			res = lincheck.Shrink(cfg, res, 20)
		}
		r.Caught, r.Events, r.Size, r.Property = true, len(res.History), len(res.History), "Linearizable"
		r.Counterexample = res.String()
	}
	return r
}
