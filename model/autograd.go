package model

import (
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Layer 5: saved tensors and versions. A saved tensor names the object it
// was saved from by identity and remembers the object's version then; the
// version is the model's own count of the object's bumps, so a runtime
// whose counters are wrong (a view with a counter of its own, two bumps
// for one op) cannot talk the model out of a saved-modified.

// savedVar is one saved tensor.
type savedVar struct {
	t       *thing
	id      int // t's number at save: a thing whose memory was reused has another
	version int
	data    bool // saved through an alias with a counter of its own: no version check
	made    hist
	unsaved bool
	gone    hist // the unsave
}

// alive reports whether the saved tensor's object is still live.
func (s *savedVar) alive() bool {
	return s.t.id() == s.id && s.t.state() == live
}

// save records a saved tensor of the live object at a.
func (c *Checker) save(name string, a traces.Addr, data bool) {
	if s, ok := c.saved[name]; ok && !s.unsaved {
		c.misuse(traces.OpSave, a, s.t, "saved tensor "+strconv.Quote(name)+" is already saved and not unsaved",
			s.made.related("saved"))
		return
	}
	t := c.lookup(traces.OpSave, a, objectMask)
	if t == nil {
		return
	}
	if c.saved == nil {
		c.saved = make(map[string]*savedVar)
	}
	c.saved[name] = &savedVar{t: t, id: t.id(), version: t.ext().version, data: data, made: c.here}
}

// unpack checks a saved tensor as backward reads it.
func (c *Checker) unpack(name string) {
	s, ok := c.saved[name]
	switch {
	case !ok:
		c.misuse(traces.OpUnpack, 0, nil, "no tensor was saved as "+strconv.Quote(name))
	case s.unsaved:
		c.report(traces.UseAfterFree, s.t.addr(), s.t, traces.OpUnpack.String()+": saved tensor "+strconv.Quote(name)+
			" was unsaved at "+s.gone.at(), s.made.related("saved"), s.gone.related("unsaved"))
	case !s.alive():
		c.report(traces.UseAfterFree, s.t.addr(), s.t, traces.OpUnpack.String()+": saved tensor "+strconv.Quote(name)+
			" is of "+s.t.String()+s.t.deathPhrase(), append(s.t.history(nil), s.made.related("saved"))...)
	case !s.data && s.t.ext().version != s.version:
		c.report(traces.SavedModified, s.t.addr(), s.t, traces.OpUnpack.String()+": saved tensor "+strconv.Quote(name)+" of "+
			s.t.String()+" is at version "+strconv.Itoa(s.t.ext().version)+"; it was saved at version "+
			strconv.Itoa(s.version), s.made.related("saved"))
	}
}

// unsave ends a saved tensor. The record stays, marked, so that a later
// unpack is told from a name never saved; a save of the name replaces it.
func (c *Checker) unsave(name string) {
	s, ok := c.saved[name]
	switch {
	case !ok:
		c.misuse(traces.OpUnsave, 0, nil, "no tensor was saved as "+strconv.Quote(name))
	case s.unsaved:
		c.report(traces.DoubleFree, s.t.addr(), s.t, traces.OpUnsave.String()+": saved tensor "+strconv.Quote(name)+
			" was unsaved at "+s.gone.at(), s.made.related("saved"), s.gone.related("unsaved"))
	default:
		s.unsaved, s.gone = true, c.here
	}
}

// bump counts an in-place op on the live object at a. On a leaf that
// requires grad it is a misuse, unless grad mode was off.
func (c *Checker) bump(a traces.Addr, kind string) {
	t := c.lookup(traces.OpBump, a, objectMask)
	if t == nil {
		return
	}
	t.ext().version++
	if t.ext().leafGrad && kind != "no_grad" {
		c.misuse(traces.OpBump, a, t, "a leaf Variable that requires grad is being used in an in-place operation: "+t.String())
	}
}

// leafGrad marks the live object at a as a leaf's storage that requires grad.
func (c *Checker) leafGrad(a traces.Addr) {
	if t := c.lookup(traces.OpLeafGrad, a, objectMask); t != nil {
		t.ext().leafGrad = true
	}
}
