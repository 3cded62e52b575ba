package drive

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// TfjsGenOptions steer GenerateTfjsProgram.
type TfjsGenOptions struct {
	// Known lets programs do what real tfjs 4.22.0 is known to get wrong
	// (examples/tfjsdriver/FINDINGS.md): ops on a disposed tensor, a
	// momentum optimizer, a variable disposed twice, an optimizer
	// minimizing another list of variables than it first did, or used
	// after disposeVariables. A search of the real tfjs without them is
	// clean; with them it finds those departures.
	Known bool
	// Calls is the number of calls before the teardown (default 6 to 24).
	Calls int
}

// tfjsKind is what a handle names.
type tfjsKind uint8

const (
	tkTensor tfjsKind = iota + 1
	tkVariable
	tkOptimizer
)

// tfjsThing is the generator's (and the well-formedness check's) view of
// a handle: what it is, its shape, whether the program still holds it.
type tfjsThing struct {
	kind     tfjsKind
	shape    []int
	live     bool
	kept     bool
	opt      string // an optimizer's kind
	minimize bool   // an optimizer that has made slots
	vars     []int  // the variables an optimizer minimizes, fixed by its first minimize
	spent    bool   // an optimizer made before a disposeVariables, which disposed its variables
}

// tfjsState follows a tfjs program as tfjs's contract says it runs: which
// handles are alive, and which tidy tracks each tensor.
type tfjsState struct {
	things []tfjsThing // by handle; 0 unused
	tidies [][]int     // the tensors each open tidy tracks, outermost first
}

func (s *tfjsState) thing(h int) *tfjsThing {
	if h <= 0 || h >= len(s.things) {
		return nil
	}
	return &s.things[h]
}

func (s *tfjsState) make(h int, t tfjsThing) {
	for len(s.things) <= h {
		s.things = append(s.things, tfjsThing{})
	}
	t.live = true
	s.things[h] = t
	if t.kind == tkTensor && len(s.tidies) > 0 {
		top := len(s.tidies) - 1
		s.tidies[top] = append(s.tidies[top], h)
	}
}

// endTidy ends the top tidy: what it tracks dies but the kept and the
// result, and the result it tracked moves to the tidy outside it.
func (s *tfjsState) endTidy(result []int) {
	top := len(s.tidies) - 1
	tracked := s.tidies[top]
	s.tidies = s.tidies[:top]
	for _, h := range tracked {
		t := &s.things[h]
		switch {
		case t.kept:
		case slices.Contains(result, h):
			if top > 0 {
				s.tidies[top-1] = append(s.tidies[top-1], h)
			}
		default:
			t.live = false
		}
	}
}

func (s *tfjsState) untrack(h int) {
	for i := range s.tidies {
		s.tidies[i] = slices.DeleteFunc(s.tidies[i], func(x int) bool { return x == h })
	}
}

// step takes call c, or says why it is not well formed.
func (s *tfjsState) step(c *TfjsCall) error {
	kindOf := func(h int, k tfjsKind) (*tfjsThing, error) {
		t := s.thing(h)
		if t == nil || t.kind == 0 {
			return nil, fmt.Errorf("handle %d was never made", h)
		}
		if k == tkTensor && t.kind == tkOptimizer || k != tkTensor && t.kind != k {
			return nil, fmt.Errorf("handle %d is no %s", h, [...]string{"", "tensor", "variable", "optimizer"}[k])
		}
		return t, nil
	}
	for _, h := range c.made() {
		if t := s.thing(h); t != nil && t.kind != 0 {
			return fmt.Errorf("handle %d is made twice", h)
		}
	}
	for _, h := range c.uses() {
		if t := s.thing(h); t == nil || t.kind == 0 {
			return fmt.Errorf("handle %d was never made", h)
		}
	}
	switch {
	case c.Op == TfjsTensor:
		n := 1
		for _, d := range c.Shape {
			n *= d
		}
		if n != len(c.Values) {
			return fmt.Errorf("shape %v holds %d values, not %d", c.Shape, n, len(c.Values))
		}
		s.make(c.Handle, tfjsThing{kind: tkTensor, shape: c.Shape})
	case c.Op.unary():
		a, err := kindOf(c.A, tkTensor)
		if err != nil {
			return err
		}
		s.make(c.Handle, tfjsThing{kind: tkTensor, shape: unaryShape(c.Op, a.shape, c.Shape)})
	case c.Op.binary():
		a, err := kindOf(c.A, tkTensor)
		if err != nil {
			return err
		}
		b, err := kindOf(c.B, tkTensor)
		if err != nil {
			return err
		}
		shape, ok := binaryShape(c.Op, a.shape, b.shape)
		if !ok {
			return fmt.Errorf("%s of shapes %v and %v", c.Op, a.shape, b.shape)
		}
		s.make(c.Handle, tfjsThing{kind: tkTensor, shape: shape})
	case c.Op == TfjsTidy:
		s.tidies = append(s.tidies, nil)
	case c.Op == TfjsTidyEnd || c.Op == TfjsTidyThrow:
		if len(s.tidies) == 0 {
			return fmt.Errorf("%s with no tidy open", c.Op)
		}
		if c.Op == TfjsTidyEnd {
			if err := checkContainer(c.Container, len(c.Result), true); err != nil {
				return err
			}
		}
		s.endTidy(c.Result)
	case c.Op == TfjsKeep:
		t, err := kindOf(c.Target, tkTensor)
		if err != nil {
			return err
		}
		t.kept = true
		s.untrack(c.Target)
	case c.Op == TfjsDispose:
		if err := checkContainer(c.Container, len(c.Targets), false); err != nil {
			return err
		}
		for _, h := range c.Targets {
			if t := s.thing(h); t.kind == tkOptimizer && c.Container != "tensor" {
				return fmt.Errorf("optimizer %d in a container: tf.dispose disposes tensors only", h)
			}
			s.things[h].live = false
		}
	case c.Op == TfjsVariable:
		a, err := kindOf(c.A, tkTensor)
		if err != nil {
			return err
		}
		s.make(c.Handle, tfjsThing{kind: tkVariable, shape: a.shape})
	case c.Op == TfjsAssign:
		v, err := kindOf(c.Target, tkVariable)
		if err != nil {
			return err
		}
		a, err := kindOf(c.A, tkTensor)
		if err != nil {
			return err
		}
		if !slices.Equal(v.shape, a.shape) {
			return fmt.Errorf("assign of shape %v to a variable of shape %v", a.shape, v.shape)
		}
	case c.Op == TfjsDisposeVariables:
		for i := range s.things {
			switch s.things[i].kind {
			case tkVariable:
				s.things[i].live = false
			case tkOptimizer:
				s.things[i].spent = true
			}
		}
	case c.Op == TfjsGrad || c.Op == TfjsValueAndGrad:
		a, err := kindOf(c.A, tkTensor)
		if err != nil {
			return err
		}
		if !unaryLoss(c.Fn) {
			return fmt.Errorf("%s of loss %q, which is not one of one tensor", c.Op, c.Fn)
		}
		if c.Op == TfjsGrad {
			s.make(c.Handle, tfjsThing{kind: tkTensor, shape: a.shape})
		} else {
			if len(c.Handles) != 2 {
				return fmt.Errorf("valueAndGrad into %d handles, not 2", len(c.Handles))
			}
			s.make(c.Handles[0], tfjsThing{kind: tkTensor, shape: []int{}})
			s.make(c.Handles[1], tfjsThing{kind: tkTensor, shape: a.shape})
		}
	case c.Op == TfjsGrads:
		a, err := kindOf(c.A, tkTensor)
		if err != nil {
			return err
		}
		b, err := kindOf(c.B, tkTensor)
		if err != nil {
			return err
		}
		if unaryLoss(c.Fn) || c.Fn == "" || len(c.Handles) != 2 {
			return fmt.Errorf("grads of loss %q into %d handles: want a loss of two tensors, two handles", c.Fn, len(c.Handles))
		}
		if c.A == c.B {
			return fmt.Errorf("grads of [x, x]: tfjs returns one tensor for both handles")
		}
		if _, ok := binaryShape(TfjsAdd, a.shape, b.shape); !ok {
			return fmt.Errorf("grads of shapes %v and %v", a.shape, b.shape)
		}
		s.make(c.Handles[0], tfjsThing{kind: tkTensor, shape: a.shape})
		s.make(c.Handles[1], tfjsThing{kind: tkTensor, shape: b.shape})
	case c.Op == TfjsVariableGrads || c.Op == TfjsMinimize:
		if len(c.Vars) == 0 || !unaryLoss(c.Fn) {
			return fmt.Errorf("%s needs variables and a loss of one tensor", c.Op)
		}
		for _, h := range c.Vars {
			if _, err := kindOf(h, tkVariable); err != nil {
				return err
			}
		}
		if c.Op == TfjsMinimize {
			o, err := kindOf(c.Target, tkOptimizer)
			if err != nil {
				return err
			}
			o.minimize = true
			if o.vars == nil {
				o.vars = slices.Clone(c.Vars)
			}
			break
		}
		if len(c.Handles) != len(c.Vars)+1 {
			return fmt.Errorf("variableGrads of %d variables into %d handles", len(c.Vars), len(c.Handles))
		}
		s.make(c.Handles[0], tfjsThing{kind: tkTensor, shape: []int{}})
		for i, h := range c.Vars {
			s.make(c.Handles[i+1], tfjsThing{kind: tkTensor, shape: s.things[h].shape})
		}
	case c.Op == TfjsOptimizer:
		switch c.Kind {
		case "sgd", "momentum", "adam":
		default:
			return fmt.Errorf("optimizer of kind %q", c.Kind)
		}
		s.make(c.Handle, tfjsThing{kind: tkOptimizer, opt: c.Kind})
	case c.Op == TfjsDataSync || c.Op == TfjsArraySync:
		if _, err := kindOf(c.Target, tkTensor); err != nil {
			return err
		}
	case c.Op == TfjsEnd:
		if len(s.tidies) > 0 {
			return fmt.Errorf("end with %d tidies open", len(s.tidies))
		}
	default:
		return fmt.Errorf("no call %q", c.Op)
	}
	return nil
}

func checkContainer(kind string, n int, none bool) error {
	switch {
	case kind == "tensor" && n == 1, kind == "array", kind == "object":
		return nil
	case kind == "none" && none && n == 0:
		return nil
	}
	return fmt.Errorf("container %q of %d tensors", kind, n)
}

func unaryLoss(fn string) bool { return fn == "sumSquare" || fn == "meanExp" || fn == "sumRelu" }

// CheckTfjsProgram reports whether calls are a well-formed tfjs program:
// each handle made once before it is used, as what the call needs (a
// tensor, a variable, an optimizer), shapes that fit, tidies closed, and
// end last, once. Disposed handles may be used: that is a misuse the
// runtime must refuse.
func CheckTfjsProgram(calls []TfjsCall) error {
	var s tfjsState
	for i := range calls {
		if calls[i].Op == TfjsEnd && i != len(calls)-1 {
			return fmt.Errorf("drive: tfjs call %d: end before the last call", i)
		}
		if err := s.step(&calls[i]); err != nil {
			return fmt.Errorf("drive: tfjs call %d (%s): %w", i, calls[i].Op, err)
		}
	}
	if len(calls) == 0 || calls[len(calls)-1].Op != TfjsEnd {
		return fmt.Errorf("drive: a tfjs program ends with end")
	}
	return nil
}

func unaryShape(op TfjsOp, a, shape []int) []int {
	switch op {
	case TfjsSum, TfjsMean:
		return []int{}
	case TfjsReshape:
		return shape
	case TfjsExpandDims:
		return append([]int{1}, a...)
	case TfjsSqueeze:
		return slices.DeleteFunc(slices.Clone(a), func(d int) bool { return d == 1 })
	}
	return a
}

// binaryShape is the shape of op of a and b, with tfjs's broadcasting
// (trailing dimensions equal or 1), or matMul's rule.
func binaryShape(op TfjsOp, a, b []int) ([]int, bool) {
	if op == TfjsMatMul {
		if len(a) != 2 || len(b) != 2 || a[1] != b[0] {
			return nil, false
		}
		return []int{a[0], b[1]}, true
	}
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range n {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

var tfjsShapes = [][]int{{}, {2}, {3}, {2, 2}, {2, 3}, {3, 2}, {1, 3}}

// GenerateTfjsProgram returns a random well-formed tfjs program (see
// CheckTfjsProgram): tensors made from values, ops, data-sharing ops,
// tidies nested and ended by a return (of a tensor, an array, an object,
// nothing) or a throw, keeps, disposes of tensors and containers,
// variables, gradients, optimizers, reads; now and then a read of a
// disposed tensor, which tfjs must refuse. Its tidies are closed, and it
// ends with end.
func GenerateTfjsProgram(rng *rand.Rand, opts TfjsGenOptions) []TfjsCall {
	g := tfjsGen{rng: rng, known: opts.Known}
	n := opts.Calls
	if n <= 0 {
		n = 6 + rng.IntN(19)
	}
	for len(g.calls) < n {
		g.one()
	}
	for len(g.s.tidies) > 0 {
		g.endTidy()
	}
	g.add(TfjsCall{Op: TfjsEnd})
	return g.calls
}

type tfjsGen struct {
	rng   *rand.Rand
	known bool
	s     tfjsState
	calls []TfjsCall
	next  int
}

func (g *tfjsGen) add(c TfjsCall) {
	if err := g.s.step(&c); err != nil { // the generator's own bug: never sent
		panic(fmt.Sprintf("drive: GenerateTfjsProgram made %s: %v", c, err))
	}
	g.calls = append(g.calls, c)
}

func (g *tfjsGen) handle() int { g.next++; return g.next }

// pick returns a handle of kind k, live or (dead) not, satisfying ok, or 0.
func (g *tfjsGen) pick(k tfjsKind, live bool, ok func(*tfjsThing) bool) int {
	var hs []int
	for h := range g.s.things {
		t := &g.s.things[h]
		if t.kind == k && t.live == live && (ok == nil || ok(t)) {
			hs = append(hs, h)
		}
	}
	if len(hs) == 0 {
		return 0
	}
	return hs[g.rng.IntN(len(hs))]
}

func (g *tfjsGen) tensor(live bool) int {
	if h := g.pick(tkTensor, live, nil); h != 0 || !live {
		return h
	}
	return g.newTensor(tfjsShapes[g.rng.IntN(len(tfjsShapes))])
}

func (g *tfjsGen) newTensor(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = float64(g.rng.IntN(7) - 3)
	}
	h := g.handle()
	g.add(TfjsCall{Op: TfjsTensor, Handle: h, Shape: slices.Clone(shape), Values: vals})
	return h
}

var (
	tfjsUnary  = []TfjsOp{TfjsNeg, TfjsExp, TfjsSquare, TfjsRelu, TfjsAbs, TfjsTanh, TfjsSum, TfjsMean}
	tfjsShared = []TfjsOp{TfjsReshape, TfjsClone, TfjsExpandDims, TfjsSqueeze}
	tfjsBinary = []TfjsOp{TfjsAdd, TfjsSub, TfjsMul, TfjsMaximum}
	tfjsLosses = []string{"sumSquare", "meanExp", "sumRelu"}
)

func (g *tfjsGen) one() {
	r := g.rng.IntN(100)
	switch {
	case r < 12:
		g.newTensor(tfjsShapes[g.rng.IntN(len(tfjsShapes))])
	case r < 24:
		a := g.tensor(true)
		if g.known && g.rng.IntN(8) == 0 {
			if d := g.tensor(false); d != 0 {
				a = d // an op on a disposed tensor
			}
		}
		g.add(TfjsCall{Op: tfjsUnary[g.rng.IntN(len(tfjsUnary))], Handle: g.handle(), A: a})
	case r < 32:
		a := g.tensor(true)
		op := tfjsShared[g.rng.IntN(len(tfjsShared))]
		c := TfjsCall{Op: op, Handle: g.handle(), A: a}
		if op == TfjsReshape {
			c.Shape = tfjsReshapeTo(g.rng, g.s.things[a].shape)
		}
		g.add(c)
	case r < 40:
		a := g.tensor(true)
		op := tfjsBinary[g.rng.IntN(len(tfjsBinary))]
		b := g.pick(tkTensor, true, func(t *tfjsThing) bool { _, ok := binaryShape(op, g.s.things[a].shape, t.shape); return ok })
		if b == 0 {
			b = g.newTensor(g.s.things[a].shape)
		}
		g.add(TfjsCall{Op: op, Handle: g.handle(), A: a, B: b})
	case r < 44:
		a := g.pick(tkTensor, true, func(t *tfjsThing) bool { return len(t.shape) == 2 })
		if a == 0 {
			a = g.newTensor([]int{2, 3})
		}
		k := g.s.things[a].shape[1]
		b := g.pick(tkTensor, true, func(t *tfjsThing) bool { return len(t.shape) == 2 && t.shape[0] == k })
		if b == 0 {
			b = g.newTensor([]int{k, 2})
		}
		g.add(TfjsCall{Op: TfjsMatMul, Handle: g.handle(), A: a, B: b})
	case r < 52:
		if len(g.s.tidies) < 3 {
			g.add(TfjsCall{Op: TfjsTidy})
		}
	case r < 58:
		if len(g.s.tidies) > 0 {
			g.endTidy()
		}
	case r < 62:
		g.add(TfjsCall{Op: TfjsKeep, Target: g.tensor(true)})
	case r < 70:
		g.dispose()
	case r < 74:
		g.add(TfjsCall{Op: TfjsVariable, Handle: g.handle(), A: g.tensor(true)})
	case r < 77:
		if v := g.pick(tkVariable, true, nil); v != 0 {
			a := g.pick(tkTensor, true, func(t *tfjsThing) bool { return slices.Equal(t.shape, g.s.things[v].shape) })
			if a == 0 {
				a = g.newTensor(g.s.things[v].shape)
			}
			g.add(TfjsCall{Op: TfjsAssign, Target: v, A: a})
		}
	case r < 78:
		g.add(TfjsCall{Op: TfjsDisposeVariables})
	case r < 84:
		g.gradient()
	case r < 87:
		kinds := []string{"sgd", "adam"}
		if g.known {
			kinds = append(kinds, "momentum")
		}
		g.add(TfjsCall{Op: TfjsOptimizer, Handle: g.handle(), Kind: kinds[g.rng.IntN(len(kinds))]})
	case r < 91:
		g.minimize()
	default:
		op := []TfjsOp{TfjsDataSync, TfjsArraySync}[g.rng.IntN(2)]
		h := g.tensor(true)
		if g.rng.IntN(4) == 0 {
			if d := g.pick(tkTensor, false, nil); d != 0 {
				h = d // a read of a disposed tensor: tfjs must refuse it
			}
		}
		g.add(TfjsCall{Op: op, Target: h})
	}
}

// minimize minimizes with a live optimizer. tfjs's optimizers keep their
// slots by the position of a variable in the list minimized (FINDINGS.md),
// and lose their own variables to disposeVariables: unless Known, an
// optimizer always minimizes the list it first did, all of it alive, and
// one made before a disposeVariables is not used again.
func (g *tfjsGen) minimize() {
	o := g.pick(tkOptimizer, true, func(t *tfjsThing) bool { return g.known || !t.spent })
	if o == 0 {
		return
	}
	vars := g.vars()
	if ov := g.s.things[o].vars; ov != nil && !g.known {
		vars = ov
		for _, v := range vars {
			if !g.s.things[v].live {
				return
			}
		}
	}
	if len(vars) > 0 {
		g.add(TfjsCall{Op: TfjsMinimize, Target: o, Vars: vars, Fn: tfjsLosses[g.rng.IntN(len(tfjsLosses))]})
	}
}

func (g *tfjsGen) vars() []int {
	var vs []int
	for h, t := range g.s.things {
		if t.kind == tkVariable && t.live {
			vs = append(vs, h)
		}
	}
	g.rng.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
	return vs[:min(len(vs), 1+g.rng.IntN(2))]
}

func (g *tfjsGen) endTidy() {
	if g.rng.IntN(6) == 0 {
		g.add(TfjsCall{Op: TfjsTidyThrow})
		return
	}
	var res []int
	for range g.rng.IntN(3) {
		if h := g.pick(tkTensor, true, func(t *tfjsThing) bool { return true }); h != 0 && !slices.Contains(res, h) {
			res = append(res, h)
		}
	}
	kinds := []string{"array", "object"}
	switch len(res) {
	case 0:
		kinds = append(kinds, "none")
	case 1:
		kinds = append(kinds, "tensor")
	}
	g.add(TfjsCall{Op: TfjsTidyEnd, Result: res, Container: kinds[g.rng.IntN(len(kinds))]})
}

func (g *tfjsGen) dispose() {
	r := g.rng.IntN(10)
	switch {
	case r < 2:
		if o := g.pick(tkOptimizer, true, nil); o != 0 {
			g.add(TfjsCall{Op: TfjsDispose, Targets: []int{o}, Container: "tensor"})
			return
		}
	case r < 4:
		v := g.pick(tkVariable, true, nil)
		if g.known && g.rng.IntN(2) == 0 {
			if d := g.pick(tkVariable, false, nil); d != 0 {
				v = d // a variable disposed again
			}
		}
		if v != 0 {
			g.add(TfjsCall{Op: TfjsDispose, Targets: []int{v}, Container: "tensor"})
			return
		}
	}
	var ts []int
	for range 1 + g.rng.IntN(3) {
		if h := g.pick(tkTensor, true, nil); h != 0 && !slices.Contains(ts, h) {
			ts = append(ts, h)
		}
	}
	if len(ts) == 0 {
		return
	}
	kinds := []string{"array", "object"}
	if len(ts) == 1 {
		kinds = append(kinds, "tensor", "tensor")
	}
	g.add(TfjsCall{Op: TfjsDispose, Targets: ts, Container: kinds[g.rng.IntN(len(kinds))]})
}

func (g *tfjsGen) gradient() {
	fn := tfjsLosses[g.rng.IntN(len(tfjsLosses))]
	switch g.rng.IntN(4) {
	case 0:
		g.add(TfjsCall{Op: TfjsGrad, Handle: g.handle(), A: g.tensor(true), Fn: fn})
	case 1:
		a := g.tensor(true)
		g.add(TfjsCall{Op: TfjsValueAndGrad, Handles: []int{g.handle(), g.handle()}, A: a, Fn: fn})
	case 2:
		a := g.tensor(true)
		// b is not a: tf.grads of [x, x] returns one tensor twice, which
		// two handles would name.
		b := g.pick(tkTensor, true, func(t *tfjsThing) bool {
			_, ok := binaryShape(TfjsAdd, g.s.things[a].shape, t.shape)
			return ok && t != &g.s.things[a]
		})
		if b == 0 {
			b = g.newTensor(g.s.things[a].shape)
		}
		g.add(TfjsCall{Op: TfjsGrads, Handles: []int{g.handle(), g.handle()}, A: a, B: b, Fn: []string{"sumMul", "sumAdd"}[g.rng.IntN(2)]})
	default:
		vars := g.vars()
		if len(vars) == 0 {
			return
		}
		hs := []int{g.handle()}
		for range vars {
			hs = append(hs, g.handle())
		}
		g.add(TfjsCall{Op: TfjsVariableGrads, Handles: hs, Vars: vars, Fn: fn})
	}
}

// tfjsReshapeTo picks another shape of the same number of elements.
func tfjsReshapeTo(rng *rand.Rand, shape []int) []int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	opts := [][]int{{n}, {1, n}, {n, 1}}
	if n == 6 {
		opts = append(opts, []int{2, 3}, []int{3, 2})
	}
	if n == 4 {
		opts = append(opts, []int{2, 2})
	}
	if n == 1 {
		opts = append(opts, []int{})
	}
	return slices.Clone(opts[rng.IntN(len(opts))])
}
