package drive

import (
	"slices"

	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// Correct returns the program p becomes when every step is one a correct
// caller makes (PROTOCOL.md, "Programs: correct use by default"): no
// release of a reference the program does not hold, no register without a
// reference to hand over, no call on an object the program has let die,
// no call that needs a scope, a frame or a parameter name that is not
// there. A step that would misuse the runtime is pointed at an object it
// may use instead, or dropped. Every prefix of Correct's program is
// correct, and Correct of a correct program is the program itself (its
// refs canonical), so generated programs and the candidates shrinking
// makes of them stay correct.
//
// The program's references are counted as the contract counts them: an
// alloc's or struct_init's reference belongs to its scope record; acquire
// and unregister give the program a reference of its own (a loose one),
// which release and register take; a parameter and a struct's field hold
// one each. An object dies when its count reaches 0, which in a correct
// program happens only once nothing holds it, so no handle of a dead
// object is ever used and no record outlives its object: a runtime that
// keeps its books by address is never asked to tell a dead object from a
// new one at the same address.
func Correct(p flat.Program) flat.Program {
	var o owner
	out := flat.Program{Steps: make([]flat.Step, 0, len(p.Steps))}
	for _, s := range p.Steps {
		if st, ok := o.fix(s); ok {
			out.Steps = append(out.Steps, st)
		}
	}
	return out
}

// maxAlive bounds the objects alive at once in a correct program: a Ref
// indexes them with a byte.
const maxAlive = 200

// object is one object of a correct program, as the program counts it.
type object struct {
	count   int       // every reference: loose + records + params + fields holding it
	loose   int       // references the program holds itself
	records int       // scope records of it
	fields  []*object // a struct's non-NULL fields, each holding a reference
	dead    bool
	// pinned: the object takes part in a move into a struct (see
	// movable) and must die at the top scope's exit as it stands: no call
	// may name it until then.
	pinned bool
}

// owner is what a correct program knows: the objects alive, oldest first
// (the order Refs index), the open scopes' records, the parameters and the
// frames.
type owner struct {
	alive  []*object
	scopes [][]*object
	params map[string]*object
	frames []frame
}

// frame is a layer-3 frame: its variables, and how many are defined.
type frame struct{ vars, defined int }

// fix returns s as a correct caller makes it in the program's state, and
// applies it; ok is false when no correct call is near enough (s is
// dropped).
func (o *owner) fix(s flat.Step) (flat.Step, bool) {
	switch s.Op {
	case traces.OpScopeEnter:
		o.scopes = append(o.scopes, nil)
	case traces.OpScopeExit:
		if len(o.scopes) == 0 {
			return s, false
		}
		top := o.scopes[len(o.scopes)-1]
		o.scopes = o.scopes[:len(o.scopes)-1]
		for i := len(top) - 1; i >= 0; i-- { // newest first
			top[i].records--
			if !top[i].dead { // a stale record does nothing
				o.release(top[i])
			}
		}
	case traces.OpAlloc, traces.OpStructInit:
		if len(o.scopes) == 0 || len(o.alive) >= maxAlive {
			return s, false
		}
		var fields []*object
		if s.Op == traces.OpStructInit {
			s.Fields = slices.Clone(s.Fields)
			for i := range s.Fields {
				f := o.pick(s.Fields[i], nil, nil)
				if f == nil || s.Size == 0 { // a struct at NULL holds NULL fields only
					s.Fields[i] = flat.Ref{Pick: flat.Null}
					continue
				}
				s.Fields[i] = o.ref(f, nil)
				f.count++
				fields = append(fields, f)
			}
		}
		if s.Size != 0 {
			obj := &object{count: 1, records: 1, fields: fields}
			o.alive = append(o.alive, obj)
			o.scopes[len(o.scopes)-1] = append(o.scopes[len(o.scopes)-1], obj)
		}
	case traces.OpAcquire:
		obj, ok := o.target(&s, nil, nil)
		if !ok {
			return s, false
		}
		if obj != nil {
			obj.count++
			obj.loose++
		}
	case traces.OpRelease, traces.OpRegister:
		if s.Op == traces.OpRegister && len(o.scopes) == 0 {
			return s, false
		}
		holds := func(b *object) bool { return b.loose > 0 }
		if s.Op == traces.OpRelease {
			holds = func(b *object) bool { return b.loose > 0 || o.movable(b) != nil }
		}
		obj, ok := o.target(&s, holds, nil)
		if !ok {
			return s, false
		}
		if obj == nil {
			break
		}
		if obj.loose == 0 { // a move into the struct that holds it
			obj.pinned, o.movable(obj).pinned = true, true
			obj.count--
			break
		}
		obj.loose--
		if s.Op == traces.OpRelease {
			o.release(obj)
		} else {
			obj.records++
			o.scopes[len(o.scopes)-1] = append(o.scopes[len(o.scopes)-1], obj)
		}
	case traces.OpUnregister:
		recorded := func(b *object) bool { return b.records > 0 }
		obj, ok := o.target(&s, recorded, recorded) // the session picks among recorded objects
		if !ok {
			return s, false
		}
		if obj != nil {
			o.unrecord(obj)
			obj.loose++
		}
	case traces.OpParamRegister:
		obj, ok := o.target(&s, nil, nil)
		if !ok {
			return s, false
		}
		if obj != nil {
			obj.count++
			old := o.params[s.Name]
			if o.params == nil {
				o.params = map[string]*object{}
			}
			o.params[s.Name] = obj
			if old != nil {
				o.release(old)
			}
		}
	case traces.OpParamRelease:
		obj, ok := o.params[s.Name]
		if !ok {
			if len(o.params) == 0 {
				return s, false
			}
			held := make([]string, 0, len(o.params))
			for n := range o.params {
				held = append(held, n)
			}
			slices.Sort(held)
			s.Name = held[len(s.Name)%len(held)]
			obj = o.params[s.Name]
		}
		delete(o.params, s.Name)
		o.release(obj)
	case traces.OpFnEnter:
		o.frames = append(o.frames, frame{vars: len(s.Lives)})
	case traces.OpFnExit:
		if len(o.frames) == 0 {
			return s, false
		}
		o.frames = o.frames[:len(o.frames)-1]
	case traces.OpArenaGet:
		n := len(o.frames)
		if n == 0 || o.frames[n-1].defined >= o.frames[n-1].vars {
			return s, false
		}
		o.frames[n-1].defined++
		if s.Size == 0 { // a zero-sized buffer is NULL, and an access through it is of NULL
			s.Size = 16
		}
	case traces.OpRead, traces.OpWrite:
		if n := len(o.frames); n == 0 || o.frames[n-1].defined == 0 {
			return s, false
		}
	case traces.OpEnd:
		// the harness's: the teardown and end come after the program
	default:
		return s, false
	}
	return s, true
}

// target resolves s.Target to an object alive that ok accepts (any, for
// nil), rewriting the ref to name it among the objects the session picks
// from (those in accepts; all alive for nil): the object the ref names if
// it is acceptable, else the ref's index among the acceptable ones. A
// NULL target stays NULL (a call on NULL does nothing, correctly); found
// is false when nothing is acceptable.
func (o *owner) target(s *flat.Step, ok, in func(*object) bool) (obj *object, found bool) {
	if s.Target.Pick == flat.Null {
		return nil, true
	}
	if obj = o.pick(s.Target, ok, in); obj == nil {
		return nil, false
	}
	s.Target = o.ref(obj, in)
	return obj, true
}

// pick returns the object r names among those alive that ok accepts, nil
// if there is none: a Live ref is read as the session reads it (its index
// among the objects alive that in accepts), and if that object is not
// acceptable, or r is Dead (a correct program has no use for the dead),
// its index is taken among the acceptable ones.
func (o *owner) pick(r flat.Ref, ok, in func(*object) bool) *object {
	if r.Pick == flat.Null {
		return nil
	}
	// A pinned object is no call's to name (see movable), but it counts
	// among those the session picks from.
	accepts := func(f func(*object) bool, b *object) bool { return !b.pinned && (f == nil || f(b)) }
	if r.Pick == flat.Live {
		k := 0
		for _, b := range o.alive {
			if in != nil && !in(b) {
				continue
			}
			if k == int(r.Index) {
				if accepts(ok, b) {
					return b
				}
				break
			}
			k++
		}
	}
	var among []*object
	for _, b := range o.alive {
		if accepts(ok, b) {
			among = append(among, b)
		}
	}
	if len(among) == 0 {
		return nil
	}
	return among[int(r.Index)%len(among)]
}

// ref returns the canonical Live ref of obj among the objects alive that
// in accepts (all, for nil).
func (o *owner) ref(obj *object, in func(*object) bool) flat.Ref {
	k := 0
	for _, b := range o.alive {
		if b == obj {
			return flat.Ref{Pick: flat.Live, Index: uint8(k)}
		}
		if in == nil || in(b) {
			k++
		}
	}
	return flat.Ref{Pick: flat.Null}
}

// release takes one reference from obj; at 0 it dies, releasing its
// fields.
func (o *owner) release(obj *object) {
	obj.count--
	if obj.count > 0 {
		return
	}
	obj.dead = true
	if i := slices.Index(o.alive, obj); i >= 0 {
		o.alive = slices.Delete(o.alive, i, i+1)
	}
	for _, f := range obj.fields {
		o.release(f)
	}
}

// movable returns the struct that t can be moved into, or nil. The
// contract's own example of scope order (FORMAT.md: a struct made after
// its field, the field released once after the struct took it, so the
// struct holds its only count) is correct though the program releases a
// reference it does not hold: at the scope's exit, newest first, the
// struct dies and takes the field with it, and the field's own record is
// then stale and does nothing. That is safe only when nothing else holds
// either: t has exactly its record in the top scope and one struct's
// hold; the struct, made after that record in the same scope, has only
// its record. Both are then pinned until that exit.
func (o *owner) movable(t *object) *object {
	n := len(o.scopes)
	if n == 0 || t.pinned || t.loose != 0 || t.count != 2 || t.records != 1 {
		return nil
	}
	top := o.scopes[n-1]
	at := slices.Index(top, t)
	if at < 0 {
		return nil
	}
	for _, s := range top[at+1:] {
		if s.count == 1 && s.records == 1 && s.loose == 0 && !s.pinned && slices.Index(s.fields, t) >= 0 &&
			len(s.fields) == 1 && !o.held(s) && !o.held(t) {
			return s
		}
	}
	return nil
}

// held reports whether a parameter holds b.
func (o *owner) held(b *object) bool {
	for _, p := range o.params {
		if p == b {
			return true
		}
	}
	return false
}

// unrecord removes obj's newest record from the scope stack.
func (o *owner) unrecord(obj *object) {
	for s := len(o.scopes) - 1; s >= 0; s-- {
		for i := len(o.scopes[s]) - 1; i >= 0; i-- {
			if o.scopes[s][i] == obj {
				o.scopes[s] = slices.Delete(o.scopes[s], i, i+1)
				obj.records--
				return
			}
		}
	}
}
