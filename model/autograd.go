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
func (c *Checker) save(op traces.Op, name string, a traces.Addr, data bool) {
	if s, ok := c.saved[name]; ok && !s.unsaved {
		c.misuse(op, a, s.t, "saved tensor "+strconv.Quote(name)+" is already saved and not unsaved",
			s.made.related("saved"))
		return
	}
	t := c.lookup(op, a)
	if t == nil {
		return
	}
	if c.saved == nil {
		c.saved = make(map[string]*savedVar)
	}
	c.saved[name] = &savedVar{t: t, id: t.id(), version: heldVersion(t), data: data, made: c.here}
}

// unpack checks a saved tensor as backward reads it.
func (c *Checker) unpack(op traces.Op, name string) {
	s := c.usable(op, name)
	if s != nil && !s.data && heldVersion(s.t) != s.version {
		c.report(traces.SavedModified, s.t.addr(), s.t, op.String()+": saved tensor "+strconv.Quote(name)+" of "+
			s.t.String()+heldPhrase(s.t)+"; it was saved at version "+
			strconv.Itoa(s.version), s.made.related("saved"))
	}
}

// usable returns the saved tensor name for an op that reads it (unpack,
// snapshot, restore, recompute), or nil once it reported why it cannot:
// never saved (misuse), unsaved or its object dead (use-after-free).
func (c *Checker) usable(op traces.Op, name string) *savedVar {
	s, ok := c.saved[name]
	switch {
	case !ok:
		c.misuse(op, 0, nil, "no tensor was saved as "+strconv.Quote(name))
	case s.unsaved:
		c.report(traces.UseAfterFree, s.t.addr(), s.t, op.String()+": saved tensor "+strconv.Quote(name)+
			" was unsaved at "+s.gone.at(), s.made.related("saved"), s.gone.related("unsaved"))
	case !s.alive():
		c.report(traces.UseAfterFree, s.t.addr(), s.t, op.String()+": saved tensor "+strconv.Quote(name)+
			" is of "+s.t.String()+s.t.deathPhrase(), append(s.t.history(nil), s.made.related("saved"))...)
	default:
		return s
	}
	return nil
}

// heldVersion is the version whose values the object t holds: its count
// of bumps, unless a recompute since the last bump put an older
// version's values back.
func heldVersion(t *thing) int {
	if x := t.ext(); x.holds > 0 {
		return x.holds - 1
	}
	return t.ext().version
}

// heldPhrase is " is at version 2", or, after a recompute, " holds the
// values of version 0 (a recompute put them back; its version is 1)".
func heldPhrase(t *thing) string {
	if t.ext().holds > 0 {
		return " holds the values of version " + strconv.Itoa(heldVersion(t)) + " (a recompute put them back; its version is " +
			strconv.Itoa(t.ext().version) + ")"
	}
	return " is at version " + strconv.Itoa(t.ext().version)
}

// snapshot is a copy of a saved tensor's storage that a checkpoint took:
// the storage by identity and the version of the values it held then.
type snapshot struct {
	of      *thing
	ofID    int
	version int
	name    string // the saved tensor it was taken for
	made    hist
	written *hist // the first write into the snapshot after it was taken, if any
}

// wroteInto notes a write into t: a snapshot written after it was taken
// no longer holds the values of its version.
func (c *Checker) wroteInto(t *thing) {
	if t.x != nil && t.x.snap != nil && t.x.snap.written == nil {
		at := c.here
		t.x.snap.written = &at
	}
}

// snapshot makes the live object at a a snapshot of saved tensor name's
// storage. The object is looked up first, so that a dead one is only a
// use-after-free.
func (c *Checker) snapshot(op traces.Op, name string, a traces.Addr) {
	t := c.lookup(op, a)
	if t == nil {
		return
	}
	s := c.usable(op, name)
	if s == nil {
		return
	}
	t.ext().snap = &snapshot{of: s.t, ofID: s.id, version: heldVersion(s.t), name: name, made: c.here}
}

// restore checks a saved tensor read from the snapshot at a: a snapshot
// of its storage, at its saved version.
func (c *Checker) restore(op traces.Op, name string, a traces.Addr) {
	t := c.lookup(op, a)
	if t == nil {
		return
	}
	s := c.usable(op, name)
	if s == nil {
		return
	}
	sn := t.ext().snap
	switch {
	case sn == nil:
		c.misuse(op, a, t, t.String()+" is not a snapshot (no snapshot event made it one)")
	case sn.of != s.t || sn.ofID != s.id:
		c.misuse(op, a, t, t.String()+" is a snapshot of saved tensor "+strconv.Quote(sn.name)+"'s storage, "+
			"not of "+strconv.Quote(name)+"'s ("+s.t.String()+")", sn.made.related("snapshot taken"), s.made.related("saved"))
	case !s.data && sn.written != nil:
		c.report(traces.SavedModified, a, t, op.String()+": saved tensor "+strconv.Quote(name)+" of "+
			s.t.String()+" from the snapshot "+t.String()+", which was written at "+sn.written.at()+
			" after it was taken: it no longer holds version "+strconv.Itoa(sn.version),
			s.made.related("saved"), sn.made.related("snapshot taken"), sn.written.related("snapshot written"))
	case !s.data && sn.version != s.version:
		c.report(traces.SavedModified, a, t, op.String()+": saved tensor "+strconv.Quote(name)+" of "+
			s.t.String()+" was saved at version "+strconv.Itoa(s.version)+"; the snapshot "+t.String()+
			" holds version "+strconv.Itoa(sn.version), s.made.related("saved"), sn.made.related("snapshot taken"))
	}
}

// recompute puts the values of saved tensor name's version back into
// its storage: a runtime computed them again from the node's inputs.
func (c *Checker) recompute(op traces.Op, name string) {
	if s := c.usable(op, name); s != nil && !s.data {
		s.t.ext().holds = s.version + 1
	}
}

// unsave ends a saved tensor. The record stays, marked, so that a later
// unpack is told from a name never saved; a save of the name replaces it.
func (c *Checker) unsave(op traces.Op, name string) {
	s, ok := c.saved[name]
	switch {
	case !ok:
		c.misuse(op, 0, nil, "no tensor was saved as "+strconv.Quote(name))
	case s.unsaved:
		c.report(traces.DoubleFree, s.t.addr(), s.t, op.String()+": saved tensor "+strconv.Quote(name)+
			" was unsaved at "+s.gone.at(), s.made.related("saved"), s.gone.related("unsaved"))
	default:
		s.unsaved, s.gone = true, c.here
	}
}

// bump counts an in-place op on the live object at a. On a leaf that
// requires grad it is a misuse, unless grad mode was off.
func (c *Checker) bump(op traces.Op, a traces.Addr, kind string) {
	t := c.lookup(op, a)
	if t == nil {
		return
	}
	t.ext().version++
	t.ext().holds = 0
	if t.ext().leafGrad && kind != "no_grad" {
		c.misuse(op, a, t, "a leaf Variable that requires grad is being used in an in-place operation: "+t.String())
	}
}

// leafGrad marks the live object at a as a leaf's storage that requires grad.
func (c *Checker) leafGrad(op traces.Op, a traces.Addr) {
	if t := c.lookup(op, a); t != nil {
		t.ext().leafGrad = true
	}
}
