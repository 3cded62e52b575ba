// Package impl is a runtime memory manager modelled on the TensorLogic
// runtime. (Helper: replace this comment with the package contract.)
package impl

import "github.com/tlcheck/tlcheck/traces"

// Reuse is the simulated heap's address reuse policy.
type Reuse uint8

const (
	// ReuseLIFO hands the most recently freed block of a size back first,
	// like glibc's tcache: the policy that provokes address-reuse bugs.
	ReuseLIFO Reuse = iota
	// ReuseFIFO quarantines freed blocks and reuses the oldest first, like ASan.
	ReuseFIFO
)

// Fault names a documented bug that can be switched on (see Catalog).
type Fault string

// Config configures a Runtime. The zero Config is a correct runtime with
// LIFO reuse that records nothing.
type Config struct {
	Reuse  Reuse
	Faults []Fault            // faults to switch on; all off by default
	Record func(traces.Event) // if set, receives every call and every real free, effects on
}

// Runtime is the memory manager. It keeps its books by address.
type Runtime struct{}

// New returns a Runtime configured by cfg.
func New(cfg Config) *Runtime { panic("unimplemented") }

// Calls. Each records its event (and the frees it caused) and returns an
// *Error whose Kind is the contract's violation kind on misuse.
func (r *Runtime) ScopeEnter() error                      { panic("unimplemented") }
func (r *Runtime) ScopeExit() error                       { panic("unimplemented") }
func (r *Runtime) Alloc(size uint64) (traces.Addr, error) { panic("unimplemented") }
func (r *Runtime) StructInit(size uint64, fields []traces.Addr) (traces.Addr, error) {
	panic("unimplemented")
}
func (r *Runtime) Acquire(a traces.Addr) error                    { panic("unimplemented") }
func (r *Runtime) Release(a traces.Addr) error                    { panic("unimplemented") }
func (r *Runtime) Register(a traces.Addr) error                   { panic("unimplemented") }
func (r *Runtime) Unregister(a traces.Addr) error                 { panic("unimplemented") }
func (r *Runtime) ParamRegister(name string, a traces.Addr) error { panic("unimplemented") }
func (r *Runtime) ParamRelease(name string) error                 { panic("unimplemented") }
func (r *Runtime) End() error                                     { panic("unimplemented") }

// State returns the observable layer-2 state.
func (r *Runtime) State() traces.State { panic("unimplemented") }

// Error is a misuse the runtime detected and refused.
type Error struct {
	Kind traces.Kind
	Op   traces.Op
	Addr traces.Addr
	Msg  string
}

func (e *Error) Error() string {
	return string(e.Kind) + ": " + e.Op.String() + " " + e.Addr.String() + ": " + e.Msg
}

// FaultInfo documents one fault of the catalog.
type FaultInfo struct {
	Name    Fault
	Summary string // one line: what goes wrong
	Bug     string // the historic bug it reproduces
	Trigger string // the shortest call sequence that shows it
}

// Catalog lists every fault, in a stable order.
func Catalog() []FaultInfo { panic("unimplemented") }
