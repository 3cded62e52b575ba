package model

import (
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Layer 2: managed objects, the scope stack and the parameter registry.

type scope struct {
	enter hist
	recs  []record
}

// record is a scope record: it names its object by identity, so a record
// of a dead object stays stale even when the address is reused.
type record struct {
	t    *thing
	made hist
}

type param struct {
	t    *thing
	made hist
}

func (c *Checker) scopeEnter(op traces.Op) {
	n := len(c.scopes)
	if n < cap(c.scopes) {
		c.scopes = c.scopes[:n+1] // reuse the popped scope's records array
	} else {
		c.scopes = append(c.scopes, scope{})
	}
	s := &c.scopes[n]
	s.enter = c.here
	s.recs = s.recs[:0]
}

// scopeExit pops the top scope and releases the live objects its records
// name, newest record first: the reverse of the order they were made, as
// destructors run in C++ and drops in Rust, and as the TensorLogic
// runtime's exit_scope walks its records. The order decides verdicts: a
// struct made after its field releases the field before the field's own
// record is reached, which then finds it dead and does nothing. A record
// of a dead object does nothing; with effects it is kept until the next
// call, since a free of its address now is a stale record acting on the
// address's new owner.
func (c *Checker) scopeExit(op traces.Op) {
	n := len(c.scopes)
	if n == 0 {
		c.misuse(op, 0, nil, "no scope is open")
		return
	}
	s := &c.scopes[n-1]
	for i := len(s.recs) - 1; i >= 0; i-- {
		r := s.recs[i]
		r.t.x.records--
		switch r.t.state() {
		case live:
			c.release(op, r.t)
		case dead:
			if c.effects {
				c.stale = append(c.stale, r)
			}
			c.noteStale(r)
		}
	}
	clear(s.recs)
	s.recs = s.recs[:0]
	c.scopes = c.scopes[:n-1]
}

// addRecord gives t a record in the top scope, made by the current event.
func (c *Checker) addRecord(t *thing) {
	s := &c.scopes[len(c.scopes)-1]
	s.recs = append(s.recs, record{t: t, made: c.here})
	t.x.records++
}

// alloc makes an object (alloc) or a struct (struct_init) with count 1 and
// a record in the top scope. With no scope open the object is still made,
// taking the runtime's word that it exists, but has no record.
func (c *Checker) alloc(ev *traces.Event) {
	isStruct := ev.Op == traces.OpStructInit
	if ev.Addr == 0 {
		if isStruct && hasField(ev.Fields) {
			c.misuse(ev.Op, 0, nil, "a struct at NULL (a zero-sized type) cannot have fields")
		}
		return
	}
	if len(c.scopes) == 0 {
		c.misuse(ev.Op, ev.Addr, nil, "no scope is open to record the new object")
	}
	var fields []*thing
	if isStruct {
		for _, f := range ev.Fields {
			if ft := c.resolve(ev.Op, f, kObject.mask()); ft != nil {
				ft.x.count++
				fields = append(fields, ft)
			}
		}
	}
	t := c.make(ev.Op, kObject, ev.Addr, ev.Size)
	t.x.count = 1
	x := t.ext()
	x.tag = ev.Kind
	if isStruct {
		x.isStruct = true
		x.fields = fields
	}
	if len(c.scopes) > 0 {
		c.addRecord(t)
	}
}

func hasField(fs []traces.Addr) bool {
	for _, f := range fs {
		if f != 0 {
			return true
		}
	}
	return false
}

func (c *Checker) acquire(op traces.Op, a traces.Addr) {
	if t := c.lookup(op, a); t != nil {
		t.x.count++
	}
}

func (c *Checker) releaseOp(op traces.Op, a traces.Addr) {
	if t := c.lookup(op, a); t != nil {
		c.release(op, t)
	}
}

// release drops one reference to live object t, for op. At 0 it dies
// (with effects: its free becomes due), a struct first releasing its
// fields.
func (c *Checker) release(op traces.Op, t *thing) {
	t.x.count--
	if t.x.count > 0 {
		return
	}
	c.zero(op, t)
}

// zero handles objects whose count reached 0 at op: each releases its fields,
// recursively (with a work list, however deep the structs nest), then
// dies or, with effects, waits for its free.
func (c *Checker) zero(op traces.Op, t *thing) {
	c.work = append(c.work[:0], t)
	for len(c.work) > 0 {
		t := c.work[len(c.work)-1]
		c.work = c.work[:len(c.work)-1]
		x := t.ext()
		for _, f := range x.fields {
			// A field whose count already reached 0 earlier in this cascade
			// (a struct holding it twice) is as dead as one that died before.
			if f.state() != live || f.x.count == 0 {
				phrase := ", whose count already reached 0 in this release"
				if f.state() != live {
					phrase = f.deathPhrase()
				}
				c.report(traces.DoubleFree, f.addr(), f, op.String()+": dying "+t.String()+
					" releases its field "+f.String()+phrase, append(f.history(nil), t.madeAt().related("struct allocated"))...)
				continue
			}
			f.x.count--
			if f.x.count == 0 {
				c.work = append(c.work, f)
			}
		}
		x.fields = nil
		x.zero = c.here
		if c.effects {
			t.Died = dueMark
			c.due = append(c.due, t)
		} else {
			c.kill(t, c.here)
		}
	}
}

// register adds a record of a live object to the top scope.
func (c *Checker) register(op traces.Op, a traces.Addr) {
	if a == 0 {
		return
	}
	if len(c.scopes) == 0 {
		c.misuse(op, a, nil, "no scope is open to record "+a.String()+" in")
		return
	}
	if t := c.lookup(op, a); t != nil {
		c.addRecord(t)
	}
}

// unregister removes the object's newest record, searching from the top
// scope down; its count is unchanged (a move).
func (c *Checker) unregister(op traces.Op, a traces.Addr) {
	t := c.lookup(op, a)
	if t == nil {
		return
	}
	if t.x.records > 0 {
		for i := len(c.scopes) - 1; i >= 0; i-- {
			s := &c.scopes[i]
			for j := len(s.recs) - 1; j >= 0; j-- {
				if s.recs[j].t == t {
					copy(s.recs[j:], s.recs[j+1:])
					s.recs[len(s.recs)-1] = record{}
					s.recs = s.recs[:len(s.recs)-1]
					t.x.records--
					return
				}
			}
		}
	}
	c.misuse(op, a, t, t.String()+" has no scope record to remove", t.madeAt().related("allocated"))
}

// paramRegister acquires the object and holds it under name, releasing the
// object the name held before (after the acquire, so re-registering the
// same object keeps it alive).
func (c *Checker) paramRegister(op traces.Op, name string, a traces.Addr) {
	t := c.lookup(op, a)
	if t == nil {
		return
	}
	t.x.count++
	old, had := c.params[name]
	c.params[name] = param{t: t, made: c.here}
	if had {
		c.releaseParam(op, name, old)
	}
}

func (c *Checker) paramRelease(op traces.Op, name string) {
	p, ok := c.params[name]
	if !ok {
		c.misuse(op, 0, nil, "no parameter is registered as "+strconv.Quote(name))
		return
	}
	delete(c.params, name)
	c.releaseParam(op, name, p)
}

// releaseParam releases the object a parameter held, for op.
func (c *Checker) releaseParam(op traces.Op, name string, p param) {
	if p.t.state() == live {
		c.release(op, p.t)
		return
	}
	c.report(traces.DoubleFree, p.t.addr(), p.t, op.String()+": parameter "+strconv.Quote(name)+" releases "+
		p.t.String()+p.t.deathPhrase(), append(p.t.history(nil), p.made.related("parameter registered"))...)
}
