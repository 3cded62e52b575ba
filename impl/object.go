package impl

import "github.com/tlcheck/tlcheck/traces"

// Alloc makes a tensor of size bytes: count 1, with a record in the top
// scope. Size 0 is a zero-sized type, which is NULL: nothing is allocated.
// With no scope open the object is still made (the recorded alloc says
// so) but has no record, and the call returns its address with a misuse.
func (r *Runtime) Alloc(size uint64) (traces.Addr, error) {
	if size == 0 && !r.HasFault(FaultZSTAllocates) {
		r.emit(traces.Event{Op: traces.OpAlloc})
		return 0, nil
	}
	a, b, err := r.newObject(size)
	if err != nil {
		return 0, err
	}
	r.emit(traces.Event{Op: traces.OpAlloc, Addr: a, Size: size, Count: uint64(b.count), HasCount: true})
	r.adopt(traces.OpAlloc, a, b)
	return a, r.errs.take()
}

// StructInit makes a struct of size bytes holding fields: count 1, a
// record in the top scope, and each non-NULL field acquired. The fields
// are looked up before the struct's block is chosen, so a field that died
// at the address the struct then gets is seen as dead. A field that is
// dead or was never allocated is reported and not held: the struct
// releases at its death only what it acquired here. A struct of size 0
// whose fields are all NULL (zero-sized too) is NULL; size 0 with a
// non-NULL field is a misuse.
func (r *Runtime) StructInit(size uint64, fields []traces.Addr) (traces.Addr, error) {
	if size == 0 && (holdsObject(fields) || !r.HasFault(FaultZSTAllocates)) {
		r.emit(traces.Event{Op: traces.OpStructInit, Fields: r.copyFields(fields)})
		if holdsObject(fields) {
			return 0, &Error{Kind: traces.Misuse, Op: traces.OpStructInit,
				Msg: "a zero-sized (NULL) struct cannot hold fields"}
		}
		return 0, nil
	}
	if r.depth == 0 {
		r.errs.add(traces.Misuse, traces.OpStructInit, 0, "", "no scope is open: the object has no record")
	}
	held := r.held[:0]
	for _, f := range fields {
		if f == 0 {
			continue
		}
		if fb := r.object(traces.OpStructInit, f, ""); fb != nil {
			held = append(held, ref{f, fb.gen})
		}
	}
	r.held = held
	a, b, err := r.newObject(size)
	if err != nil {
		r.errs.list = r.errs.list[:0]
		return 0, err
	}
	r.emit(traces.Event{Op: traces.OpStructInit, Addr: a, Size: size, Fields: r.copyFields(fields),
		Count: uint64(b.count), HasCount: true})
	b.isStruct = true
	if r.depth > 0 {
		r.push(a, b)
	} else {
		r.errs.list[0].(*Error).Addr = a // the no-scope misuse, noted before a was chosen
	}
	for _, f := range held {
		// A field is live by now unless the heap just handed its own
		// block to the struct, which only the heap-double-handout fault
		// does; then the field's object is gone.
		if fb := r.heap.lookup(f.addr); fb != nil && fb.live && fb.gen == f.gen {
			if !r.HasFault(FaultStructInitNoAcquire) {
				fb.count = r.kept(fb.count + 1)
			}
			b.fields = append(b.fields, f)
		}
	}
	return a, r.errs.take()
}

// Acquire adds one to the count of the object at a.
func (r *Runtime) Acquire(a traces.Addr) error {
	r.hold(traces.Event{Op: traces.OpAcquire, Addr: a}, a)
	defer r.finish()
	if a == 0 {
		return nil
	}
	if b := r.object(traces.OpAcquire, a, ""); b != nil {
		b.count = r.kept(b.count + 1)
	}
	return r.errs.take()
}

// Release takes one from the count of the object at a. At 0 the object
// dies: a struct first releases each of its fields, then it is freed.
func (r *Runtime) Release(a traces.Addr) error {
	r.hold(traces.Event{Op: traces.OpRelease, Addr: a}, a)
	defer r.finish()
	if a == 0 {
		return nil
	}
	if b := r.object(traces.OpRelease, a, ""); b != nil {
		r.release(traces.OpRelease, a, b)
	}
	return r.errs.take()
}

// newObject hands out a block for a new object of size bytes and resets
// its header to count 1. Any record still naming the address belongs to
// an object that died there: it is purged now, so it can never act on the
// new one.
func (r *Runtime) newObject(size uint64) (traces.Addr, *block, error) {
	var a traces.Addr
	var b *block
	if size == 0 { // only under zst-allocates
		a, b = ZSTAddr, &r.heap.zst
		b.gen++
		b.live = true
	} else {
		var err error
		if a, b, err = r.heap.malloc(size); err != nil {
			return 0, nil, err
		}
	}
	if b.records > 0 && !r.HasFault(FaultStaleRecordNotPurged) {
		r.purge(a, b)
	}
	b.count = 1
	b.isStruct = false
	b.fields = b.fields[:0]
	return a, b, nil
}

// object returns the header of the live object at a, or nil after noting
// the misuse: invalid-address where no object was ever made, and where the
// object is dead, double-free for a release and use-after-free otherwise.
func (r *Runtime) object(op traces.Op, a traces.Addr, name string) *block {
	b := r.heap.lookup(a)
	switch {
	case b == nil:
		r.errs.add(traces.InvalidAddress, op, a, name, "no object was ever allocated at this address")
	case !b.live && op == traces.OpRelease:
		r.errs.add(traces.DoubleFree, op, a, name, "object already freed")
	case !b.live:
		r.errs.add(traces.UseAfterFree, op, a, name, "object already freed")
	default:
		return b
	}
	return nil
}

// release drops one reference to the live object at a, which dies at 0.
func (r *Runtime) release(op traces.Op, a traces.Addr, b *block) {
	b.count = r.kept(b.count - 1)
	if b.count == 0 && !r.HasFault(FaultReleaseIgnoresZero) {
		r.die(op, a, b)
	}
}

// releaseRef releases the object ref names, if it is still the one alive
// at its address; a dead one is a double free, noted and not acted on.
func (r *Runtime) releaseRef(op traces.Op, name string, ref ref, msg string) {
	b := r.heap.lookup(ref.addr)
	if b == nil || !b.live || b.gen != ref.gen {
		r.errs.add(traces.DoubleFree, op, ref.addr, name, msg)
		return
	}
	r.release(op, ref.addr, b)
}

// die frees the object at a, whose count reached 0: a struct releases its
// fields first (recursively, in order), then its block goes back to the
// heap and the free is recorded.
func (r *Runtime) die(op traces.Op, a traces.Addr, b *block) {
	if b.isStruct {
		fields := b.fields
		b.fields = b.fields[:0]
		if !r.HasFault(FaultStructDeathNoFieldRelease) {
			for _, f := range fields {
				r.releaseRef(op, "", f, "a field of the dying struct is already freed")
			}
		}
		if r.HasFault(FaultStructDeathFieldsOnly) {
			return
		}
	}
	r.heap.free(a, b)
	r.emit(traces.Event{Op: traces.OpFree, Addr: a})
}

// holdsObject reports whether any field is non-NULL.
func holdsObject(fields []traces.Addr) bool {
	for _, f := range fields {
		if f != 0 {
			return true
		}
	}
	return false
}

// copyFields copies fields for the recorder, which may keep the event
// after the caller reuses its slice; without a recorder it costs nothing.
func (r *Runtime) copyFields(fields []traces.Addr) []traces.Addr {
	if r.record == nil || fields == nil {
		return nil
	}
	return append([]traces.Addr{}, fields...)
}
