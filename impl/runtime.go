package impl

import (
	"fmt"

	"github.com/tlcheck/tlcheck/traces"
)

// Reuse is the simulated heap's address reuse policy.
type Reuse uint8

const (
	// ReuseLIFO hands the most recently freed block of a size class back
	// first, like glibc's tcache: the policy that provokes address-reuse bugs.
	ReuseLIFO Reuse = iota
	// ReuseFIFO quarantines freed blocks and reuses the oldest first, like
	// ASan: a freed block comes back only after Config.Quarantine others of
	// its size class have been freed after it.
	ReuseFIFO
)

// Config configures a Runtime. The zero Config is a correct runtime with
// LIFO reuse that records nothing.
type Config struct {
	Reuse  Reuse
	Faults []Fault            // faults to switch on; all off by default
	Record func(traces.Event) // if set, receives every call and every real free, effects on

	// Quarantine is, under ReuseFIFO, how many freed blocks of a size class
	// are held back before the oldest is reused; 0 means DefaultQuarantine.
	Quarantine int
}

// Validate reports the first thing wrong with c: an unknown reuse policy
// or a fault the catalog lacks.
func (c Config) Validate() error {
	if c.Reuse > ReuseFIFO {
		return fmt.Errorf("impl: unknown reuse policy %d", c.Reuse)
	}
	if _, err := parseFaults(c.Faults); err != nil {
		return fmt.Errorf("impl: %w", err)
	}
	return nil
}

// Runtime is the memory manager. It keeps its books by address, in the
// headers of its heap blocks; it is not safe for concurrent use.
type Runtime struct {
	heap   heap
	scopes [][]ref // scopes[:depth] are open; the rest keep their capacity for reuse
	depth  int
	params map[string]ref
	faults faultSet
	record func(traces.Event)
	errs   errs
	held   []ref // StructInit's scratch list of the fields it will hold
	arena  arena // layer 3: the frames and their chunks
	call   heldCall
}

// New returns a Runtime configured by cfg. It panics if cfg does not pass
// Validate: check fault names a user typed with LookupFault first.
func New(cfg Config) *Runtime {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	faults, _ := parseFaults(cfg.Faults)
	r := &Runtime{
		heap:   newHeap(cfg.Reuse, cfg.Quarantine),
		params: make(map[string]ref),
		faults: faults,
		record: cfg.Record,
	}
	r.heap.twice = r.HasFault(FaultHeapDoubleHandout)
	r.heap.zstOn = r.HasFault(FaultZSTAllocates)
	return r
}

// emit hands ev to the recorder, if there is one.
func (r *Runtime) emit(ev traces.Event) {
	if r.call.on { // a counted call's event is held back (counts.go)
		r.call.queue = append(r.call.queue, ev)
		return
	}
	if r.record != nil {
		r.record(ev)
	}
}

// End records the end of the run. It changes nothing: what remains is
// what State shows, and the leak check is the model's to make. Scopes or
// frames still open are a misuse (one error each, scopes first).
func (r *Runtime) End() error {
	r.emit(traces.Event{Op: traces.OpEnd})
	if r.depth > 0 {
		r.errs.add(traces.Misuse, traces.OpEnd, 0, "", fmt.Sprintf("%d scope(s) still open", r.depth))
	}
	if r.arena.depth > 0 {
		r.errs.add(traces.Misuse, traces.OpEnd, 0, "", fmt.Sprintf("%d function frame(s) still open", r.arena.depth))
	}
	return r.errs.take()
}

// State returns the observable layer-2 state as the runtime's books have
// it: every live object with its count, each open scope's records of live
// objects (bottom scope first, oldest record first) and every parameter
// name with the address it holds. Maps and slices are never nil.
func (r *Runtime) State() traces.State {
	var st traces.State
	r.StateInto(&st)
	return st
}

// Matches reports whether State would return a state equal to st, nil
// and empty maps and slices alike, without making one: for a caller that
// compares the runtime's state with another's after every call, where
// making it costs more than the call.
func (r *Runtime) Matches(st *traces.State) bool {
	if r.depth != len(st.Scopes) || len(r.params) != len(st.Params) {
		return false
	}
	n := 0
	if h := &r.heap; h.zstOn && h.zst.live {
		if c, ok := st.Objects[ZSTAddr]; !ok || c != h.zst.count {
			return false
		}
		n++
	}
	for k := range r.heap.classes {
		c := &r.heap.classes[k]
		for i := range c.blocks {
			if b := &c.blocks[i]; b.live {
				if v, ok := st.Objects[blockAddr(k, uint32(i))]; !ok || v != b.count {
					return false
				}
				n++
			}
		}
	}
	if n != len(st.Objects) {
		return false
	}
	for i, recs := range r.scopes[:r.depth] {
		want, j := st.Scopes[i], 0
		for _, rec := range recs {
			if b := r.heap.lookup(rec.addr); b != nil && r.names(rec, b) {
				if j == len(want) || want[j] != rec.addr {
					return false
				}
				j++
			}
		}
		if j != len(want) {
			return false
		}
	}
	for name, p := range r.params {
		if a, ok := st.Params[name]; !ok || a != p.addr {
			return false
		}
	}
	return true
}

// StateInto writes what State returns into st, reusing its maps and
// slices: for a caller that compares the state after every call and
// keeps none of them. What st held before is overwritten.
func (r *Runtime) StateInto(st *traces.State) {
	if st.Objects == nil {
		st.Objects = make(map[traces.Addr]int)
	}
	if st.Params == nil {
		st.Params = make(map[string]traces.Addr, len(r.params))
	}
	clear(st.Objects)
	clear(st.Params)
	scopes := st.Scopes[:0]
	if scopes == nil {
		scopes = make([][]traces.Addr, 0, r.depth)
	}
	r.heap.each(func(a traces.Addr, b *block) { st.Objects[a] = b.count })
	for i, recs := range r.scopes[:r.depth] {
		var live []traces.Addr
		if i < cap(scopes) {
			live = scopes[:i+1][i][:0] // the slice this scope had last time
		}
		if live == nil {
			live = make([]traces.Addr, 0, len(recs))
		}
		for _, rec := range recs {
			if b := r.heap.lookup(rec.addr); b != nil && r.names(rec, b) {
				live = append(live, rec.addr)
			}
		}
		scopes = append(scopes, live)
	}
	st.Scopes = scopes
	for name, p := range r.params {
		st.Params[name] = p.addr
	}
}
