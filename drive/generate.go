package drive

import (
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// GenerateProgram draws a program that uses the runtime as its contract
// says (see Correct), of at least steps steps (0: the default mix, 4 to
// about 700). Most are flat.Generate's programs made correct; about
// one in three also has an episode of the shapes that reach deep bugs and
// that short random programs almost never make: a count taken past 256 on
// one object and back (a count kept in a byte), a scope of 9 to 40 records
// (a record array that spills), one address freed and handed out again
// many times (books kept by address), an object held by a parameter while
// everything around it churns (a long life), a field moved into the struct
// that holds it (the order of a scope's exit). A longer program is more of
// the same: chunks of both until it has steps steps. Three programs in
// four end by releasing the references the program still holds, as a
// correct caller does; the fourth leaks them, which the model explains.
func GenerateProgram(r *rand.Rand, steps int) flat.Program {
	g := &gen{r: r}
	if steps <= 0 {
		g.chunk()
		if r.IntN(3) == 0 {
			g.episode()
			g.chunk()
		}
	} else {
		for len(g.p.Steps) < steps {
			if r.IntN(3) == 0 {
				g.episode()
			} else {
				g.chunk()
			}
		}
	}
	if r.IntN(4) != 0 {
		g.dropLoose()
	}
	return g.p
}

// GenerateMisuse draws a program that may misuse the runtime, for a
// driver whose runtime promises to refuse misuse: flat.Generate's
// programs, each after one of GenerateProgram's deep episodes one time in
// three, until it has steps steps (0: one). An episode made after a
// program of misuse may act on other objects than it meant to, but its
// shape (one object acquired past 256, a scope of many records, one size
// freed and allocated again) stays.
func GenerateMisuse(r *rand.Rand, steps int) flat.Program {
	var p flat.Program
	for first := true; first || len(p.Steps) < steps; first = false {
		if r.IntN(3) == 0 {
			g := &gen{r: r}
			g.episode()
			p.Steps = append(p.Steps, g.p.Steps...)
		}
		p.Steps = append(p.Steps, flat.Generate(r).Steps...)
	}
	return p
}

// gen builds a correct program step by step, knowing its state (owner).
type gen struct {
	r *rand.Rand
	o owner
	p flat.Program
}

// emit appends s as Correct makes it, if it is a call at all.
func (g *gen) emit(s flat.Step) {
	if st, ok := g.o.fix(s); ok {
		g.p.Steps = append(g.p.Steps, st)
	}
}

func (g *gen) op(op traces.Op) { g.emit(flat.Step{Op: op}) }

// on emits op on obj (a live object of the program).
func (g *gen) on(op traces.Op, obj *object) {
	g.emit(flat.Step{Op: op, Target: g.o.ref(obj, nil)})
}

// alloc makes a new object of size bytes in the top scope (entering one
// if none is open) and returns it; nil if too many are alive.
func (g *gen) alloc(size uint64) *object {
	if len(g.o.scopes) == 0 {
		g.op(traces.OpScopeEnter)
	}
	n := len(g.o.alive)
	g.emit(flat.Step{Op: traces.OpAlloc, Size: size})
	if len(g.o.alive) == n {
		return nil
	}
	return g.o.alive[n]
}

// chunk is one of flat.Generate's programs, made correct.
func (g *gen) chunk() {
	for _, s := range flat.Generate(g.r).Steps {
		g.emit(s)
	}
}

// episode is one of the deep shapes.
func (g *gen) episode() {
	switch g.r.IntN(5) {
	case 0:
		g.deepCount()
	case 1:
		g.deepScope()
	case 2:
		g.reuse()
	case 3:
		g.move()
	default:
		g.longLived()
	}
}

// move is the contract's example of scope order (FORMAT.md): a struct
// made after its field, and the field released once after the struct
// took it, so that the struct holds its only count and the field dies
// with it at the scope's exit, its own record then stale (see movable).
// Some calls of a program come before the exit.
func (g *gen) move() {
	g.op(traces.OpScopeEnter)
	t := g.alloc(sizes[g.r.IntN(len(sizes))])
	if t == nil {
		return
	}
	n := len(g.o.alive)
	g.emit(flat.Step{Op: traces.OpStructInit, Size: 32, Fields: []flat.Ref{g.o.ref(t, nil)}})
	if len(g.o.alive) == n {
		return
	}
	g.on(traces.OpRelease, t)
	if g.r.IntN(2) == 0 {
		g.chunk()
	}
	g.op(traces.OpScopeExit)
}

// deepCount takes one object's count past 256 and back: by acquires, or
// by structs that each hold it three times, in a scope of their own.
func (g *gen) deepCount() {
	g.op(traces.OpScopeEnter)
	obj := g.alloc(sizes[g.r.IntN(len(sizes))])
	if obj == nil {
		return
	}
	want := 257 + g.r.IntN(48)
	structs := g.r.IntN(2) == 0
	taken := 0
	for obj.count < want {
		switch {
		case structs && g.r.IntN(3) != 0:
			f := g.o.ref(obj, nil)
			g.emit(flat.Step{Op: traces.OpStructInit, Size: 16, Fields: []flat.Ref{f, f, f}})
		case g.r.IntN(64) == 0:
			g.emit(flat.Step{Op: traces.OpParamRegister, Name: "w", Target: g.o.ref(obj, nil)})
		default:
			g.on(traces.OpAcquire, obj)
			taken++
		}
		if len(g.o.alive) >= maxAlive {
			break
		}
	}
	for range taken {
		g.on(traces.OpRelease, obj)
	}
	g.op(traces.OpScopeExit)
}

// sizes are the sizes of the objects episodes make: one common one, so
// that addresses are handed out again.
var sizes = []uint64{16, 16, 16, 32, 64}

// deepScope fills one scope with 9 to 40 records: new objects, references
// handed over (register), structs of what is there.
func (g *gen) deepScope() {
	g.op(traces.OpScopeEnter)
	n := 9 + g.r.IntN(32)
	for range n {
		switch k := g.r.IntN(6); {
		case k < 3 || len(g.o.alive) == 0:
			g.alloc(sizes[g.r.IntN(len(sizes))])
		case k == 3:
			obj := g.o.alive[g.r.IntN(len(g.o.alive))]
			g.on(traces.OpAcquire, obj)
			g.on(traces.OpRegister, obj)
		default:
			fields := make([]flat.Ref, g.r.IntN(3))
			for i := range fields {
				fields[i] = flat.Ref{Pick: flat.Live, Index: uint8(g.r.IntN(len(g.o.alive)))}
			}
			g.emit(flat.Step{Op: traces.OpStructInit, Size: 32, Fields: fields})
		}
	}
	g.op(traces.OpScopeExit)
}

// reuse frees and allocates objects of one size, 24 to 63 times, so that
// the allocator hands one address out again and again, each time to an
// object held another way: a scope record, a loose reference, a
// parameter, a struct's field.
func (g *gen) reuse() {
	n := 24 + g.r.IntN(40)
	for range n {
		switch g.r.IntN(4) {
		case 0:
			g.op(traces.OpScopeEnter)
			g.alloc(16)
			g.op(traces.OpScopeExit)
		case 1:
			if obj := g.alloc(16); obj != nil {
				g.on(traces.OpUnregister, obj)
				g.on(traces.OpRelease, obj)
			}
		case 2:
			if obj := g.alloc(16); obj != nil {
				g.emit(flat.Step{Op: traces.OpParamRegister, Name: "b", Target: g.o.ref(obj, nil)})
				g.on(traces.OpUnregister, obj)
				g.on(traces.OpRelease, obj)
			}
		default:
			obj := g.alloc(16)
			if obj == nil {
				return
			}
			n := len(g.o.alive)
			g.emit(flat.Step{Op: traces.OpStructInit, Size: 16, Fields: []flat.Ref{g.o.ref(obj, nil)}})
			if len(g.o.alive) == n {
				return
			}
			st := g.o.alive[n]
			g.on(traces.OpUnregister, obj)
			g.on(traces.OpRelease, obj) // the struct holds it now
			g.on(traces.OpUnregister, st)
			g.on(traces.OpRelease, st) // the struct dies, and its field with it
		}
	}
}

// longLived holds a new object under a parameter and lets the rest of
// the program churn around it, touching it now and then.
func (g *gen) longLived() {
	obj := g.alloc(64)
	if obj == nil {
		return
	}
	g.emit(flat.Step{Op: traces.OpParamRegister, Name: "g", Target: g.o.ref(obj, nil)})
	for range 2 + g.r.IntN(3) {
		if g.r.IntN(2) == 0 {
			g.reuse()
		} else {
			g.chunk()
		}
		if g.o.params["g"] == obj {
			g.on(traces.OpAcquire, obj)
			g.on(traces.OpRelease, obj)
		}
	}
}

// dropLoose releases every reference the program holds itself.
func (g *gen) dropLoose() {
	for i := 0; i < len(g.o.alive); {
		obj := g.o.alive[i]
		if obj.loose == 0 {
			i++
			continue
		}
		g.on(traces.OpRelease, obj) // may kill it, and others: look again from the start
		i = 0
	}
}
