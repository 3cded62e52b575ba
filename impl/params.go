package impl

import "github.com/tlcheck/tlcheck/traces"

// The parameter registry holds long-lived objects (a model's weights) by
// name, each with one reference of its own. A name holds a ref, so a
// parameter whose object was over-released and whose address was reused
// is known to be dead rather than mistaken for the new object.

// ParamRegister acquires the object at a and holds it under name. A name
// that held another object releases that one, after the acquire, so that
// re-registering the object a name already holds never frees it. NULL is a
// no-op: the name keeps what it held.
func (r *Runtime) ParamRegister(name string, a traces.Addr) error {
	r.hold(traces.Event{Op: traces.OpParamRegister, Name: name, Addr: a}, a)
	defer r.finish()
	if a == 0 {
		return nil
	}
	b := r.object(traces.OpParamRegister, a, name)
	if b == nil {
		return r.errs.take()
	}
	old, had := r.params[name]
	if had && r.HasFault(FaultParamReregisterReleaseFirst) {
		r.releaseRef(traces.OpParamRegister, name, old, "the object the name held is already freed")
		had = false
		if b = r.object(traces.OpParamRegister, a, name); b == nil {
			r.params[name] = ref{a, r.heap.lookup(a).gen}
			return r.errs.take()
		}
	}
	if !r.HasFault(FaultParamRegisterNoAcquire) {
		b.count = r.kept(b.count + 1)
	}
	r.params[name] = ref{a, b.gen}
	if had && !r.HasFault(FaultParamReregisterNoRelease) {
		r.releaseRef(traces.OpParamRegister, name, old, "the object the name held is already freed")
	}
	return r.errs.take()
}

// ParamRelease releases the object held under name and forgets the name.
// A name held by no one is a misuse; a name whose object is already dead
// is a double free, and the name is forgotten all the same.
func (r *Runtime) ParamRelease(name string) error {
	old, had := r.params[name]
	r.holdRef(traces.Event{Op: traces.OpParamRelease, Name: name}, old)
	defer r.finish()
	if !had {
		return &Error{Kind: traces.Misuse, Op: traces.OpParamRelease, Name: name,
			Msg: "no parameter is registered under this name"}
	}
	delete(r.params, name)
	r.releaseRef(traces.OpParamRelease, name, old, "the parameter's object is already freed")
	return r.errs.take()
}
