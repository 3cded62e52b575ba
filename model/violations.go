package model

import "github.com/tlcheck/tlcheck/traces"

// report adds a violation found at the current event. Related events come
// from the things given (their made and died events) and from extra.
func (c *Checker) report(k traces.Kind, a traces.Addr, t *thing, msg string, rel ...traces.Related) {
	c.emit(traces.Violation{
		Kind:    k,
		Event:   c.pos.Event,
		Line:    c.pos.Line,
		Site:    c.here.site,
		Addr:    a,
		Object:  objectID(t),
		Message: msg,
		Related: nonNil(rel),
	}, t)
}

// emit hands a violation about t (or nil) on: to Replay's orderer, or into
// what Step returns.
func (c *Checker) emit(v traces.Violation, t *thing) {
	if c.order != nil {
		var size uint64
		if t != nil {
			size = t.Size
		}
		c.order.add(v, size)
		return
	}
	c.out = append(c.out, v)
}

func objectID(t *thing) int {
	if t == nil {
		return 0
	}
	return t.id()
}

func nonNil(rel []traces.Related) []traces.Related {
	if rel == nil {
		return []traces.Related{}
	}
	return rel
}

// target begins a message about what op names: "release of", or
// "struct_init with field" for the fields a struct acquires.
func target(op traces.Op) string {
	if op == traces.OpStructInit {
		return "struct_init with field "
	}
	return op.String() + " of "
}

func article(noun string) string {
	switch noun[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + noun
	}
	return "a " + noun
}

// reportNotLive reports op on a thing that is no longer live: double-free
// for the ops that end a life (their row in the op table says so),
// use-after-free for any other.
func (c *Checker) reportNotLive(op traces.Op, t *thing) {
	k := traces.UseAfterFree
	if op.EndsLife() {
		k = traces.DoubleFree
	}
	c.report(k, t.addr(), t, target(op)+t.String()+t.deathPhrase(), t.history(nil)...)
}

// nowhere reports an op on an address where no thing of the kinds in mask
// starts: nothing at all, or the inside or the wrong kind of something.
func (c *Checker) nowhere(op traces.Op, a traces.Addr, mask kindMask) {
	want := "nothing"
	if mask&(1<<kObject) != 0 && mask&(1<<kBlock) == 0 {
		want = "no object"
	}
	msg := target(op) + a.String() + ": "
	t := c.mem.inside(spaceOf(mask), uint64(a), anyKind)
	switch {
	case t == nil:
		msg += "nothing is allocated there"
		c.report(traces.InvalidAddress, a, nil, msg)
		return
	case t.Lo != uint64(a):
		msg += want + " starts there; it lies inside " + t.String()
	default:
		msg += "it is " + t.String() + ", not " + nounsOf(mask)
	}
	if t.state() != live {
		msg += t.deathPhrase()
	}
	c.report(traces.InvalidAddress, a, t, msg, t.history(nil)...)
}

// nounsOf names what an op of the kinds in mask wanted.
func nounsOf(mask kindMask) string {
	if s, ok := maskName(mask); ok {
		return s
	}
	return "what the op names"
}

// maskName is the name of the kinds in mask: one kind's what, or the
// mask's maskWhat entry. TestOpMasks holds every op's mask to having one.
func maskName(mask kindMask) (string, bool) {
	if s, ok := maskWhat[mask]; ok {
		return s, true
	}
	for k := range nKinds {
		if mask == k.mask() {
			return k.row().what, true
		}
	}
	return "", false
}

// misuse reports a broken protocol of op, the current event's.
func (c *Checker) misuse(op traces.Op, a traces.Addr, t *thing, msg string, rel ...traces.Related) {
	c.report(traces.Misuse, a, t, op.String()+": "+msg, rel...)
}
