package impl

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Fault names a documented bug that can be switched on (see Catalog).
type Fault string

// The fault catalog. Each fault reproduces a bug from the history of the
// TensorLogic runtime (github.com/JunSuzukiJapan/tl, crates/tl_runtime and
// docs/dev/MEMORY_MANAGEMENT_STRATEGY.md), of PyTorch's allocators and
// autograd, or a bug of their shape, and each shows in a run's recorded
// trace (a free too many, a free missing, an allocation on a live
// address), in its State or in a history a checker rejects.
//
// A fault is one row, a FaultInfo, declared with DeclareFault by the
// package whose code it breaks: this package the runtime's own faults
// (faultrows.go), impl/registry the registry's, impl/gpu the pools',
// impl/lang the codegen faults of source programs and impl/autograd the
// graph engine's. A fault is in the catalog when its package is linked
// in; `tlcheck faults` lists them all.
//
// Each row names the engine that hunts its fault: the flat-program
// engines (properties, fuzz) drive Runtime, and only the faults whose
// Engine is EngineProgram are theirs to catch; the registry's faults are
// caught by the linearizability check of impl/registry/lincheck, the
// pool's by the pool property of package properties, which drives the
// allocators of impl/gpu, the codegen faults by source programs
// (EngineSource), and the autograd faults by autograd programs
// (EngineAutograd); the runtime's faults that need programs longer than
// the flat engines' 256 steps (a count past 256) by package drive's long
// programs (EngineDrive). A fault may be caught by a second engine too
// (FaultInfo.Also): source programs keep their tensor variables in
// planned arena slots, so they catch the slot planner's and the arena's
// faults as well.

// The engines that hunt faults (FaultInfo.Engine), in the order Catalog
// lists their faults.
const (
	// EngineProgram: generated flat programs run on Runtime, the model as
	// oracle (properties, fuzz, tlcheck selftest).
	EngineProgram = "program"
	// EngineRegistry: concurrent histories of impl/registry checked for
	// linearizability against a sequential model (impl/registry/lincheck).
	EngineRegistry = "registry"
	// EnginePool: the pool property of package properties, which drives
	// the allocators of package impl/gpu.
	EnginePool = "pool"
	// EngineSource: source programs of package impl/lang, lowered by the
	// seeds' codegen rules onto a Runtime that has the fault on, with the
	// interpreter and the model as oracles (properties, FuzzSource,
	// tlcheck selftest). The runtime's own calls are unchanged by these
	// faults, so only source programs can show them.
	EngineSource = "source"
	// EngineAutograd: autograd programs of package impl/autograd, whose
	// Engine is built on a Runtime that has the fault on, with the model,
	// a shadow of the version counters and ClearGrads as oracles
	// (properties, FuzzAutogradProgram, tlcheck selftest). Like the
	// codegen faults, they leave the runtime's own calls unchanged.
	EngineAutograd = "autograd"
	// EngineDrive: the long programs of package drive's generator
	// (drive.GenerateProgram: counts past 256, scopes of many records,
	// addresses handed out again and again), run on Runtime with the model
	// as oracle, in process (properties/hunt) and over the tlcheck-drive
	// protocol (tlcheck fuzz --exec, drivetest.Test). Flat programs of the
	// program engine are at most 256 steps, too short for these faults.
	EngineDrive = "drive"
)

// Engines lists the engines, in the order Catalog lists their faults.
func Engines() []string {
	return []string{EngineProgram, EngineRegistry, EnginePool, EngineSource, EngineAutograd, EngineDrive}
}

// FaultInfo is one fault's row of the catalog.
type FaultInfo struct {
	Name    Fault
	Engine  string   // which engine hunts it: one of Engines
	Also    []string // the engines other than its own that catch it too (none for most)
	Summary string   // one line: what goes wrong
	Bug     string   // the historic bug it reproduces
	Trigger string   // the shortest call sequence (for a codegen fault, source program; for an autograd fault, engine calls) that shows it
}

// CaughtBy reports whether engine catches the fault: its own, or one of
// Also.
func (f FaultInfo) CaughtBy(engine string) bool {
	return f.Engine == engine || slices.Contains(f.Also, engine)
}

// maxFaults is how many faults a faultSet holds.
const maxFaults = 64

// faults is the catalog: the rows declared while the program starts,
// then, from the first time anyone reads it, frozen in Catalog's order,
// each fault's bit its position.
var faults struct {
	mu       sync.Mutex
	declared []FaultInfo
	frozen   atomic.Pointer[frozenCatalog] // nil until first read
}

type frozenCatalog struct {
	rows []FaultInfo
	bits map[Fault]faultSet
}

// DeclareFault adds a fault's row to the catalog and returns its name.
// A package declares its faults in package-level variables, so that the
// catalog is whole before main or a test runs:
//
//	var FaultX = impl.DeclareFault(impl.FaultInfo{Name: "x", Engine: impl.EngineSource, ...})
//
// Catalog lists the faults by engine, in the order of Engines, and those
// of one engine in the order declared: a new fault goes at the end of its
// package's rows, so that the order stays stable. DeclareFault panics on
// a name declared twice, on more than 64 faults and once the catalog has
// been read; TestCatalog holds every row whole.
func DeclareFault(f FaultInfo) Fault {
	faults.mu.Lock()
	defer faults.mu.Unlock()
	switch {
	case faults.frozen.Load() != nil:
		panic("impl: DeclareFault(" + string(f.Name) + ") after the catalog was read: declare faults in package-level variables")
	case slices.ContainsFunc(faults.declared, func(g FaultInfo) bool { return g.Name == f.Name }):
		panic("impl: fault " + string(f.Name) + " declared twice")
	case len(faults.declared) == maxFaults:
		panic("impl: more than 64 faults: widen faultSet")
	}
	faults.declared = append(faults.declared, f)
	return f.Name
}

// catalog returns the frozen catalog and each fault's bit, freezing it on
// the first call.
func catalog() ([]FaultInfo, map[Fault]faultSet) {
	if c := faults.frozen.Load(); c != nil {
		return c.rows, c.bits
	}
	faults.mu.Lock()
	defer faults.mu.Unlock()
	if c := faults.frozen.Load(); c != nil {
		return c.rows, c.bits
	}
	rank := func(engine string) int {
		if i := slices.Index(Engines(), engine); i >= 0 {
			return i
		}
		return len(Engines()) // an unknown engine last; TestCatalog names it
	}
	c := &frozenCatalog{rows: slices.Clone(faults.declared), bits: make(map[Fault]faultSet, len(faults.declared))}
	slices.SortStableFunc(c.rows, func(a, b FaultInfo) int { return rank(a.Engine) - rank(b.Engine) })
	for i, f := range c.rows {
		c.bits[f.Name] = 1 << i
	}
	faults.frozen.Store(c)
	return c.rows, c.bits
}

// Catalog lists every fault declared by the packages linked in, by
// engine (in the order of Engines), each engine's in the order declared.
func Catalog() []FaultInfo {
	cat, _ := catalog()
	out := make([]FaultInfo, len(cat))
	for i, f := range cat {
		f.Also = slices.Clone(f.Also)
		out[i] = f
	}
	return out
}

// LookupFault returns the catalog entry of the fault named name. Use it to
// check a name a user typed before putting it in a Config.
func LookupFault(name string) (FaultInfo, bool) {
	cat, _ := catalog()
	for _, f := range cat {
		if string(f.Name) == name {
			f.Also = slices.Clone(f.Also)
			return f, true
		}
	}
	return FaultInfo{}, false
}

// faultSet holds the faults switched on, one bit per catalog entry (its
// position), so that asking whether a fault is on costs one AND.
type faultSet uint64

// HasFault reports whether fault f is on. The runtime asks it for its own
// faults, the lowering of source programs (package impl/lang) for the
// codegen faults, which change what a compiler emits rather than what the
// runtime does, and the autograd engine (package impl/autograd) for the
// autograd faults.
func (r *Runtime) HasFault(f Fault) bool {
	if r.faults == 0 {
		return false // the correct runtime, asked on every hot path
	}
	_, bits := catalog()
	return r.faults&bits[f] != 0
}

// parseFaults turns a Config's fault list into a set, naming the first
// fault the catalog lacks.
func parseFaults(fs []Fault) (faultSet, error) {
	cat, bits := catalog()
	var s faultSet
	for _, f := range fs {
		i := slices.IndexFunc(cat, func(c FaultInfo) bool { return c.Name == f })
		if i < 0 {
			var names []string
			for _, c := range cat {
				if runtimeCarries(c.Engine) {
					names = append(names, string(c.Name))
				}
			}
			return 0, fmt.Errorf("unknown fault %q (the catalog has %s)", f, strings.Join(names, ", "))
		}
		if e := cat[i].Engine; !runtimeCarries(e) {
			return 0, fmt.Errorf("fault %s belongs to the %s engine: Runtime has no %s to break", f, e, e)
		}
		s |= bits[f]
	}
	return s, nil
}

// runtimeCarries reports whether a Runtime can have the faults of engine
// on: its own, and those of the code built on it (the lowering of source
// programs, the autograd engine), which ask HasFault.
func runtimeCarries(engine string) bool {
	switch engine {
	case EngineProgram, EngineSource, EngineAutograd, EngineDrive:
		return true
	}
	return false
}
