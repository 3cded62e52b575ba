package flat

import (
	"math/rand/v2"
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// MaxSteps bounds the length of a decoded program, so that one fuzz input
// costs a bounded time however long it is.
const MaxSteps = 256

// sizeTable maps a byte's low bits to a size: one common size, so that the
// LIFO heap hands the same address back often (the reuse that exposes stale
// records), two others, and 0, the zero-sized type.
var sizeTable = [8]uint64{16, 16, 16, 16, 32, 32, 64, 0}

// Sizes returns the sizes generated programs give objects, each as often
// as Decode draws it.
func Sizes() []uint64 { return slices.Clone(sizeTable[:]) }

// Ref bytes: below refDead a Live index, then Dead, then Null.
const (
	refDead = 224
	refNull = 248
)

// Decode turns bytes into a program. Every byte string is a program: each
// step reads an op byte (each call owns a fixed range of op bytes, its
// weight; see calls) and then the operand bytes its call needs (a size, a
// name, a ref, a field count and one ref per field); missing bytes at the
// end read as zero. An op byte in the reserved range, which later layers'
// calls will take, makes no step. Generate draws its programs through the
// same decoder, so fuzzing and generation share one shape.
//
// The decoder follows the program's shape (see Shape) so that most
// programs are well formed: three times in four, a call sure to be a
// misuse becomes a well-formed one (see call.needs), and a param_release
// mostly names a registered parameter. The misuse that stays is on purpose.
func Decode(data []byte) Program {
	d := decoder{data: data}
	// A step takes two or three bytes on average: room for that many,
	// decoded in place, so that a program seldom grows its slice.
	var p Program
	if len(data) > 0 {
		p.Steps = make([]Step, 0, min(len(data)/2+1, MaxSteps))
	}
	for len(d.data) > 0 && len(p.Steps) < MaxSteps {
		n := len(p.Steps)
		p.Steps = append(p.Steps, Step{})
		if !d.stepInto(&p.Steps[n]) {
			p.Steps = p.Steps[:n]
		}
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

// Shape is what the decoder knows of a program so far: how many scopes it
// has open, which parameter names it has registered and which frames it
// entered, as far as the steps say (the runtime's answers may differ;
// Refs, resolved at run time, stay meaningful regardless). The zero Shape
// is an empty program's. A generator that draws steps one at a time
// (gopter's commands, rapid's actions) keeps one to weight its draws as
// Decode does.
type Shape struct {
	depth  int
	names  []string     // registered, oldest first
	frames []frameShape // layer 3: the frames entered, bottom first
}

// frameShape is a frame as the steps declare it: how many variables, and
// how many of them the arena_gets so far defined.
type frameShape struct{ vars, stmt int }

// enter, exit and define return the shape with a frame of vars variables
// pushed, the top frame popped, or the top frame's next variable defined.
// Shapes share their slices, so each copies before it changes one.
func (sh Shape) enter(vars int) Shape {
	sh.frames = append(slices.Clip(sh.frames), frameShape{vars: vars})
	return sh
}

func (sh Shape) exit() Shape {
	if n := len(sh.frames); n > 0 {
		sh.frames = slices.Clip(sh.frames[:n-1])
	}
	return sh
}

func (sh Shape) define() Shape {
	if n := len(sh.frames); n > 0 {
		sh.frames = slices.Clone(sh.frames)
		sh.frames[n-1].stmt++
	}
	return sh
}

// After returns the shape after step s.
func (sh Shape) After(s Step) Shape { return sh.after(s) }

// after returns the shape after step s.
func (sh Shape) after(s Step) Shape {
	if c := CallOf(s.Op); c != nil && c.after != nil {
		return c.after(sh, s)
	}
	return sh
}

// register and unregister return the shape with name registered or not.
func (sh Shape) register(name string) Shape {
	if !slices.Contains(sh.names, name) {
		sh.names = append(slices.Clip(sh.names), name)
	}
	return sh
}

func (sh Shape) unregister(name string) Shape {
	if i := slices.Index(sh.names, name); i >= 0 {
		sh.names = slices.Delete(slices.Clone(sh.names), i, i+1)
	}
	return sh
}

// misuse reports whether a call of c is sure to be a misuse in shape sh,
// and the op the decoder makes of it instead.
func (sh Shape) misuse(c *Call) (bool, traces.Op) {
	if c.needs != nil && !c.needs(sh) {
		return true, c.instead
	}
	return false, c.op
}

// Misuse reports whether a call of op is sure to be a misuse in shape sh,
// and the op that Decode makes of it three times in four, which avoids
// the misuse.
func (sh Shape) Misuse(op traces.Op) (sure bool, instead traces.Op) {
	if c := CallOf(op); c != nil {
		return sh.misuse(c)
	}
	return false, op
}

// keepsMisuse reports whether an op byte keeps its misuse: one time in four.
func keepsMisuse(b byte) bool { return b&3 == 0 }

// DecodeStep decodes one step from the front of b in shape sh: how a
// generator that draws steps one at a time (gopter's commands) shares the
// decoder. An op byte in the reserved range is folded onto the calls'.
func DecodeStep(b []byte, sh Shape) Step {
	b = slices.Clone(b)
	if len(b) > 0 && codeTable[b[0]] == nil {
		b[0] %= reservedCode
	}
	d := decoder{data: b, shape: sh}
	s, _ := d.step()
	return s
}

type decoder struct {
	data  []byte
	shape Shape
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
// names, if there are any; otherwise any of names.
func (d *decoder) name(registered bool) string {
	b := d.byte()
	if registered && b < nameAny && len(d.shape.names) > 0 {
		return d.shape.names[int(b)%len(d.shape.names)]
	}
	return names[int(b)%len(names)]
}

// Name bytes from nameAny on name any of names, registered or not.
const nameAny = 224

// step decodes the next step; ok is false for an op byte no call owns.
func (d *decoder) step() (s Step, ok bool) {
	ok = d.stepInto(&s)
	return s, ok
}

// stepInto decodes the next step into *s, which must be zero, and reports
// whether there was one: false for an op byte no call owns.
func (d *decoder) stepInto(s *Step) bool {
	b := d.byte()
	c := codeTable[b]
	if c == nil {
		return false
	}
	if sure, instead := d.shape.misuse(c); sure && !keepsMisuse(b) {
		c = CallOf(instead)
	}
	s.Op = c.op
	for _, o := range c.operands {
		o.row().decode(d, s)
	}
	d.shape = d.shape.after(*s)
	return true
}
