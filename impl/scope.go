package impl

import "github.com/tlcheck/tlcheck/traces"

// A scope is a list of records, oldest first; a record is a ref, so it
// names the object it was made for and not merely an address. Each block
// counts the records naming its address (block.records), which lets the
// common calls skip every scan of the stack.

// ScopeEnter pushes an empty scope.
func (r *Runtime) ScopeEnter() error {
	r.emit(traces.Event{Op: traces.OpScopeEnter})
	if r.depth == len(r.scopes) {
		r.scopes = append(r.scopes, nil)
	}
	r.depth++
	return nil
}

// ScopeExit pops the top scope and releases, newest record first (the
// reverse of the order they were made, as TensorLogic's exit_scope does),
// each record's object that is still alive. A record whose object is dead
// is stale and does nothing. The order decides verdicts: a struct made
// after its field releases the field before the field's own record comes
// up, and that record then finds the field dead and does nothing.
func (r *Runtime) ScopeExit() error {
	r.emit(traces.Event{Op: traces.OpScopeExit})
	if r.depth == 0 {
		return &Error{Kind: traces.Misuse, Op: traces.OpScopeExit, Msg: "no scope is open"}
	}
	r.depth--
	recs := r.scopes[r.depth]
	for k := range recs {
		i := len(recs) - 1 - k
		if r.HasFault(FaultScopeExitOldestFirst) {
			i = k
		}
		rec := recs[i]
		b := r.heap.lookup(rec.addr)
		if b == nil {
			continue
		}
		b.records--
		switch {
		case r.names(rec, b):
			r.release(traces.OpScopeExit, rec.addr, b)
		case r.HasFault(FaultScopeExitReleasesDead) && !b.live && b.gen == rec.gen:
			// The bug frees the dead object's block again; the heap
			// ignores the second free, the trace shows it.
			r.heap.free(rec.addr, b)
			r.emit(traces.Event{Op: traces.OpFree, Addr: rec.addr})
		}
	}
	r.scopes[r.depth] = recs[:0]
	return r.errs.take()
}

// Register adds a record for the live object at a to the top scope; the
// count is unchanged (the caller takes over a returned value).
func (r *Runtime) Register(a traces.Addr) error {
	r.hold(traces.Event{Op: traces.OpRegister, Addr: a}, a)
	defer r.finish()
	if a == 0 {
		return nil
	}
	if r.depth == 0 {
		return &Error{Kind: traces.Misuse, Op: traces.OpRegister, Addr: a, Msg: "no scope is open"}
	}
	b := r.object(traces.OpRegister, a, "")
	if b == nil {
		return r.errs.take()
	}
	if r.HasFault(FaultRegisterCountsNoRecord) && b.records > 0 {
		b.count++
		return nil
	}
	r.push(a, b)
	if r.HasFault(FaultRegisterDuplicatesRecord) {
		r.push(a, b)
	}
	return nil
}

// Unregister removes the newest record of the live object at a, searching
// from the top scope down; the count is unchanged (a move, or a value
// being returned). For a struct it is shallow: the fields keep their own
// records and counts.
func (r *Runtime) Unregister(a traces.Addr) error {
	r.hold(traces.Event{Op: traces.OpUnregister, Addr: a}, a)
	defer r.finish()
	if a == 0 {
		return nil
	}
	b := r.object(traces.OpUnregister, a, "")
	if b == nil {
		return r.errs.take()
	}
	if b.isStruct && r.HasFault(FaultStructUnregisterNone) {
		return nil
	}
	if !r.unrecord(a, b) {
		return &Error{Kind: traces.Misuse, Op: traces.OpUnregister, Addr: a, Msg: "the object has no record in any open scope"}
	}
	if b.isStruct && r.HasFault(FaultStructUnregisterDeep) {
		r.unrecordFields(b)
	}
	if r.HasFault(FaultUnregisterReleases) {
		r.release(traces.OpUnregister, a, b)
	}
	return r.errs.take()
}

// adopt gives a new object its record in the top scope; with no scope
// open the object keeps none and the call is a misuse.
func (r *Runtime) adopt(op traces.Op, a traces.Addr, b *block) {
	if r.depth == 0 {
		r.errs.add(traces.Misuse, op, a, "", "no scope is open: the object has no record")
		return
	}
	r.push(a, b)
}

func (r *Runtime) push(a traces.Addr, b *block) {
	r.scopes[r.depth-1] = append(r.scopes[r.depth-1], ref{a, b.gen})
	b.records++
}

// names reports whether rec names the object now in block b: alive, and
// of the generation the record was made for. The stale-record fault keeps
// records by address alone, so there any live object at the address will do.
func (r *Runtime) names(rec ref, b *block) bool {
	return b.live && (rec.gen == b.gen || r.HasFault(FaultStaleRecordNotPurged))
}

// unrecord removes the newest record naming the object at a and reports
// whether there was one.
func (r *Runtime) unrecord(a traces.Addr, b *block) bool {
	if b.records == 0 {
		return false
	}
	if r.HasFault(FaultUnregisterOldestRecord) {
		for s := 0; s < r.depth; s++ {
			for i, rec := range r.scopes[s] {
				if rec.addr == a && r.names(rec, b) {
					r.drop(s, i, b)
					return true
				}
			}
		}
		return false
	}
	for s := r.depth - 1; s >= 0; s-- {
		recs := r.scopes[s]
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].addr == a && r.names(recs[i], b) {
				r.drop(s, i, b)
				return true
			}
		}
	}
	return false
}

// unrecordFields is the struct-unregister-deep fault: it unregisters a
// struct's fields, and theirs, as if they were being returned too.
func (r *Runtime) unrecordFields(b *block) {
	for _, f := range b.fields {
		fb := r.heap.lookup(f.addr)
		if fb == nil || fb == b || !fb.live || fb.gen != f.gen {
			continue
		}
		r.unrecord(f.addr, fb)
		if fb.isStruct {
			r.unrecordFields(fb)
		}
	}
}

// purge removes the records naming a that were made for earlier objects
// at that address. It runs when a new object is made at a (alloc and
// struct_init), so every record of an address names its current object;
// register never meets a stale record, since its object was made after
// the purge.
func (r *Runtime) purge(a traces.Addr, b *block) {
	for s := r.depth - 1; s >= 0 && b.records > 0; s-- {
		recs := r.scopes[s]
		for i := len(recs) - 1; i >= 0 && b.records > 0; i-- {
			if recs[i].addr == a && recs[i].gen != b.gen {
				r.drop(s, i, b)
				recs = r.scopes[s]
			}
		}
	}
}

// drop removes record i of scope s, keeping the others in order.
func (r *Runtime) drop(s, i int, b *block) {
	recs := r.scopes[s]
	r.scopes[s] = append(recs[:i], recs[i+1:]...)
	b.records--
}
