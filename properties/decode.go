package properties

import (
	"math/rand/v2"
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// MaxSteps bounds the length of a decoded program, so that one fuzz input
// costs a bounded time however long it is.
const MaxSteps = 256

// opWeights are the generation weights of the calls, out of 256: mostly
// allocation and reference traffic inside scopes. Misuse is not a separate
// op: it arises from the same calls in the wrong state (a scope_exit with no
// scope, a release of a Dead ref, a param_release of a name never
// registered) and from Dead refs, which the decoder draws one time in ten.
var opWeights = []struct {
	op     traces.Op
	weight int
}{
	{traces.OpScopeEnter, 28},
	{traces.OpScopeExit, 18},
	{traces.OpAlloc, 48},
	{traces.OpStructInit, 18},
	{traces.OpAcquire, 28},
	{traces.OpRelease, 38},
	{traces.OpRegister, 22},
	{traces.OpUnregister, 16},
	{traces.OpParamRegister, 22},
	{traces.OpParamRelease, 18},
}

// opTable maps a byte to an op by opWeights.
var opTable = func() (t [256]traces.Op) {
	i := 0
	for _, w := range opWeights {
		for n := 0; n < w.weight; n++ {
			t[i] = w.op
			i++
		}
	}
	if i != len(t) {
		panic("properties: op weights must sum to 256")
	}
	return t
}()

// sizeTable maps a byte's low bits to a size: one common size, so that the
// LIFO heap hands the same address back often (the reuse that exposes stale
// records), two others, and 0, the zero-sized type.
var sizeTable = [8]uint64{16, 16, 16, 16, 32, 32, 64, 0}

// Ref bytes: below refDead a Live index, then Dead, then Null.
const (
	refDead = 224
	refNull = 248
)

// Decode turns bytes into a program. Every byte string is a program: each
// step reads an op byte (weighted by opWeights) and then the operand bytes
// its op needs (a size, a name, a ref, a field count and one ref per
// field); missing bytes at the end read as zero. Generate draws its programs
// through the same decoder, so fuzzing and generation share one shape.
//
// The decoder follows the program's shape (see shape) so that most
// programs are well formed: three times in four, a call sure to be a
// misuse becomes a well-formed one (see shape.misuse), and a param_release
// mostly names a registered parameter. The misuse that stays is on purpose.
func Decode(data []byte) Program {
	d := decoder{data: data}
	var p Program
	for len(d.data) > 0 && len(p.Steps) < MaxSteps {
		p.Steps = append(p.Steps, d.step())
	}
	return p
}

// Generate draws a random program of about 4 to 80 steps from r.
func Generate(r *rand.Rand) Program {
	data := make([]byte, 8+r.IntN(160))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	return Decode(data)
}

// shape is what the decoder knows of a program so far: how many scopes it
// has open and which parameter names it has registered, as far as the
// steps say (the runtime's answers may differ; Refs, resolved at run time,
// stay meaningful regardless).
type shape struct {
	depth int
	names []string // registered, oldest first
}

// after returns the shape after step s.
func (sh shape) after(s Step) shape {
	switch s.Op {
	case traces.OpScopeEnter:
		sh.depth++
	case traces.OpScopeExit:
		sh.depth = max(sh.depth-1, 0)
	case traces.OpParamRegister:
		if !slices.Contains(sh.names, s.Name) {
			sh.names = append(slices.Clip(sh.names), s.Name)
		}
	case traces.OpParamRelease:
		if i := slices.Index(sh.names, s.Name); i >= 0 {
			sh.names = slices.Delete(slices.Clone(sh.names), i, i+1)
		}
	}
	return sh
}

// misuse reports whether op is sure to be a misuse in shape sh, and the op
// the decoder makes of it instead: scope_enter for a call that needs a
// scope when none is open, param_register for a param_release when no
// name is registered.
func (sh shape) misuse(op traces.Op) (bool, traces.Op) {
	switch {
	case sh.depth == 0 && (op == traces.OpScopeExit || op == traces.OpAlloc ||
		op == traces.OpStructInit || op == traces.OpRegister):
		return true, traces.OpScopeEnter
	case op == traces.OpParamRelease && len(sh.names) == 0:
		return true, traces.OpParamRegister
	}
	return false, op
}

// keepsMisuse reports whether an op byte keeps its misuse: one time in four.
func keepsMisuse(b byte) bool { return b&3 == 0 }

// decodeStep decodes one step from the front of b in shape sh: how a
// generator that draws steps one at a time (gopter's commands) shares the
// decoder.
func decodeStep(b []byte, sh shape) Step {
	d := decoder{data: b, shape: sh}
	return d.step()
}

type decoder struct {
	data  []byte
	shape shape
}

func (d *decoder) byte() byte {
	if len(d.data) == 0 {
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

func (d *decoder) ref() Ref {
	switch b := d.byte(); {
	case b >= refNull:
		return Ref{Pick: Null}
	case b >= refDead:
		return Ref{Pick: Dead, Index: b - refDead}
	default:
		return Ref{Pick: Live, Index: b}
	}
}

// name decodes a parameter name: below nameAny one of the registered
// names, if there are any; otherwise any of Names.
func (d *decoder) name(registered bool) string {
	b := d.byte()
	if registered && b < nameAny && len(d.shape.names) > 0 {
		return d.shape.names[int(b)%len(d.shape.names)]
	}
	return Names[int(b)%len(Names)]
}

// Name bytes from nameAny on name any of Names, registered or not.
const nameAny = 224

func (d *decoder) step() Step {
	b := d.byte()
	s := Step{Op: opTable[b]}
	if sure, instead := d.shape.misuse(s.Op); sure && !keepsMisuse(b) {
		s.Op = instead
	}
	switch s.Op {
	case traces.OpAlloc:
		s.Size = sizeTable[d.byte()%8]
	case traces.OpStructInit:
		s.Size = sizeTable[d.byte()%8]
		n := int(d.byte() % 4)
		for range n {
			s.Fields = append(s.Fields, d.ref())
		}
	case traces.OpAcquire, traces.OpRelease, traces.OpRegister, traces.OpUnregister:
		s.Target = d.ref()
	case traces.OpParamRegister:
		s.Name = d.name(false)
		s.Target = d.ref()
	case traces.OpParamRelease:
		s.Name = d.name(true)
	}
	d.shape = d.shape.after(s)
	return s
}
