package drive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// ProtocolName and ProtocolVersion are what a driver's hello must say.
const (
	ProtocolName    = "tlcheck-drive"
	ProtocolVersion = 1
)

// Hello is the driver's first line: who it is and what it can do.
type Hello struct {
	Protocol string   `json:"protocol"`         // ProtocolName
	Version  int      `json:"version"`          // ProtocolVersion
	Layers   []int    `json:"layers"`           // the trace layers its runtime has: 2, 2 and 3; 5 for autograd programs
	Calls    []string `json:"calls,omitempty"`  // the calls it takes; empty: every call of its layers
	Source   string   `json:"source,omitempty"` // free text, the header's source in its traces
	Notes    []string `json:"notes,omitempty"`  // free text: where the runtime knowingly departs from what it stands for
	// Departures are the known differences of Notes as data, which the
	// differential honours (see Departure).
	Departures []Departure `json:"departures,omitempty"`
	// Misuse: the runtime promises to refuse misuse (PROTOCOL.md, "Correct
	// use and misuse"), and asks for programs that misuse it.
	Misuse bool `json:"misuse,omitempty"`
	// Restart: the driver cannot make reset give the same answers whatever
	// ran before, and asks to be started again for every program.
	Restart bool `json:"restart,omitempty"`

	// Programs: the program languages it takes besides its layers'
	// calls: "tfjs" (PROTOCOL.md, "tfjs programs").
	Programs []string `json:"programs,omitempty"`
}

// Autograd reports whether the driver takes layer-5 programs.
func (h Hello) Autograd() bool { return slices.Contains(h.Layers, 5) }

// Call is one call of a program, as the protocol sends it: a trace event
// whose objects are named by handle, not by address. A call that makes an
// object or hands out a buffer (alloc, struct_init, arena_get) gives it a
// new Handle; the calls after it name it by that number (Target, Fields),
// and the driver acts on the address its runtime returned for it, even
// after the object died (a dangling handle is how a program misuses a dead
// object). Handle 0 is NULL.
type Call struct {
	Op     traces.Op
	Handle int    // alloc, struct_init, arena_get: the handle of what the call makes
	Target int    // acquire, release, register, unregister, param_register, read, write
	Size   uint64 // alloc, struct_init, arena_get, read, write
	Name   string // param_register, param_release
	Fields []int  // struct_init: handles, 0 for a NULL field
	Slots  int    // fn_enter
	Slot   int    // arena_get
	Var    string // arena_get, read, write
}

// callField is a field a call may carry.
type callField uint8

const (
	cHandle callField = 1 << iota
	cTarget
	cSize
	cName
	cFields
	cSlots
	cSlot
	cVar
)

// callRows says which fields each call carries, and its layer: the
// protocol's table of calls (PROTOCOL.md lists the same).
var callRows = map[traces.Op]struct {
	fields callField
	layer  int
}{
	traces.OpScopeEnter:    {0, 2},
	traces.OpScopeExit:     {0, 2},
	traces.OpAlloc:         {cHandle | cSize, 2},
	traces.OpStructInit:    {cHandle | cSize | cFields, 2},
	traces.OpAcquire:       {cTarget, 2},
	traces.OpRelease:       {cTarget, 2},
	traces.OpRegister:      {cTarget, 2},
	traces.OpUnregister:    {cTarget, 2},
	traces.OpParamRegister: {cName | cTarget, 2},
	traces.OpParamRelease:  {cName, 2},
	traces.OpEnd:           {0, 2},
	traces.OpFnEnter:       {cSlots, 3},
	traces.OpFnExit:        {0, 3},
	traces.OpArenaGet:      {cHandle | cSlot | cSize | cVar, 3},
	traces.OpRead:          {cTarget | cSize | cVar, 3},
	traces.OpWrite:         {cTarget | cSize | cVar, 3},
}

// CallOps lists the calls of layer (2 or 3) in the contract's order.
func CallOps(layer int) []traces.Op {
	var ops []traces.Op
	for _, op := range traces.Ops() {
		if r, ok := callRows[op]; ok && r.layer == layer {
			ops = append(ops, op)
		}
	}
	return ops
}

// callCodec is the codec of the calls of layers 2 and 3: their fields,
// declared once, in the order a call line writes them.
var callCodec = codec[Call, callField]{rows: []fieldRow[Call, callField]{
	intField(cHandle, "handle", func(c *Call) *int { return &c.Handle }),
	stringField(cName, "name", func(c *Call) *string { return &c.Name }),
	intField(cTarget, "target", func(c *Call) *int { return &c.Target }),
	intField(cSlots, "slots", func(c *Call) *int { return &c.Slots }),
	intField(cSlot, "slot", func(c *Call) *int { return &c.Slot }),
	uintField(cSize, "size", func(c *Call) *uint64 { return &c.Size }),
	intsField(cFields, "fields", func(c *Call) *[]int { return &c.Fields }),
	func() fieldRow[Call, callField] {
		r := stringField(cVar, "var", func(c *Call) *string { return &c.Var })
		r.omit = func(c *Call) bool { return c.Var == "" } // a read or write with no variable
		return r
	}(),
}}

// AppendJSON appends the call as a protocol line without its id and
// closing brace's newline: {"op":"alloc","handle":3,"size":16}.
func (c *Call) AppendJSON(b []byte) []byte { return c.appendJSON(b, -1) }

// appendJSON appends the call's object, with "id" first when id >= 0.
func (c *Call) appendJSON(b []byte, id int64) []byte {
	b = append(b, '{')
	if id >= 0 {
		b = append(b, `"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
	}
	b = append(b, `"op":"`...)
	b = append(b, c.Op.String()...)
	b = append(b, '"')
	b = callCodec.appendFields(b, c, callRows[c.Op].fields)
	return append(b, '}')
}

// ParseCall reads a call line, as the harness sends it or a counterexample
// file holds it. It returns the call and its id (-1 if it has none). An op
// of "reset" returns a zero Call with ok false and no error.
func ParseCall(line []byte) (c Call, id int64, reset bool, err error) {
	id, op, seen, err := callCodec.parse(line, &c)
	if err != nil {
		return Call{}, id, false, err
	}
	if op == "reset" {
		return Call{}, id, true, nil
	}
	o, ok := traces.ParseOp(op)
	row, known := callRows[o]
	if !ok || !known {
		return Call{}, id, false, fmt.Errorf("op %q is not a call (the calls are %v and reset)", op, append(CallOps(2), CallOps(3)...))
	}
	c.Op = o
	if need := callCodec.required(row.fields); need&^seen != 0 {
		return Call{}, id, false, fmt.Errorf("%v needs %s", o, callCodec.names(need))
	}
	return c, id, false, nil
}

// Answer is the driver's line for one call: what its runtime recorded and
// whether it did the call or refused it; for a layer-5 call, also the
// tensor it made or wrote and, for backward, the gradients. A driver
// written in Go writes it with AppendJSON; ParseAnswer reads one.
type Answer struct {
	ID      int64
	Events  []traces.Event
	Refused bool
	Message string        // the runtime's message for a refusal
	Kinds   []traces.Kind // optional: the violation kinds the runtime names for a refusal
	Tensor  *TensorState  // layer 5: the tensor the call made, or the target of an in-place op after it
	Grads   []Grad        // layer 5, backward: each handle held whose grad is defined, in handle order
}

// AppendJSON appends the answer as a protocol line, without the newline.
func (a *Answer) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, a.ID, 10)
	b = append(b, `,"events":[`...)
	for i := range a.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = traces.AppendEvent(b, &a.Events[i])
	}
	b = append(b, ']')
	if a.Refused {
		b = append(b, `,"outcome":"refused","message":`...)
		b = strconv.AppendQuote(b, a.Message)
		if len(a.Kinds) > 0 {
			b = append(b, `,"kinds":[`...)
			for i, k := range a.Kinds {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendQuote(b, string(k))
			}
			b = append(b, ']')
		}
	} else {
		b = append(b, `,"outcome":"done"`...)
	}
	if a.Tensor != nil {
		b = append(b, `,"tensor":`...)
		b = appendTensor(b, a.Tensor)
	}
	if a.Grads != nil {
		b = append(b, `,"grads":[`...)
		for i, g := range a.Grads {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"handle":`...)
			b = strconv.AppendInt(b, int64(g.Handle), 10)
			b = append(b, `,"values":`...)
			b = appendFloats(b, g.Values)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// ParseAnswer reads an answer line.
func ParseAnswer(line []byte) (Answer, error) {
	var p answerParser
	var a Answer
	err := p.parse(line, &a)
	return a, err
}

// maxAnswerEvents bounds the events of one answer: a call frees at most
// what the program made (a few hundred objects), so more is not a runtime
// at work but a driver gone wrong, and the harness will not hold it.
const maxAnswerEvents = 1 << 14

// answerParser reads answer lines, reusing its event decoder and the
// answer's event slice.
type answerParser struct {
	dec *traces.EventDecoder
}

// parse reads line into a, whose Events it reuses.
func (p *answerParser) parse(line []byte, a *Answer) error {
	if p.dec == nil {
		p.dec = traces.NewEventDecoder()
	}
	*a = Answer{ID: -1, Events: a.Events[:0], Kinds: a.Kinds[:0]}
	s := scanner{b: line}
	outcome := ""
	events := false
	err := s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "id":
			var n uint64
			n, err = s.uint(63)
			a.ID = int64(n)
		case "outcome":
			outcome, err = s.str()
		case "message":
			a.Message, err = s.str()
		case "kinds":
			err = s.array(func() error {
				k, err := s.str()
				a.Kinds = append(a.Kinds, traces.Kind(k))
				return err
			})
		case "tensor":
			a.Tensor, err = s.tensor()
		case "grads":
			a.Grads, err = s.grads()
			if a.Grads == nil {
				a.Grads = []Grad{}
			}
		case "events":
			events = true
			err = s.array(func() error {
				obj, err := s.value()
				if err != nil {
					return err
				}
				n := len(a.Events)
				if n == maxAnswerEvents {
					return fmt.Errorf("more than %d events", maxAnswerEvents)
				}
				a.Events = slices.Grow(a.Events, 1)[:n+1]
				ev := &a.Events[n]
				ev.Fields = ev.Fields[:0]
				if err := p.dec.Decode(obj, ev); err != nil {
					return fmt.Errorf("event %d: %w", n, err)
				}
				if ev.Fields != nil {
					ev.Fields = slices.Clone(ev.Fields) // the decoder reuses the array
				}
				return nil
			})
		default:
			_, err = s.value()
		}
		return err
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return err
	}
	switch {
	case a.ID < 0:
		return errors.New(`no "id"`)
	case !events:
		return errors.New(`no "events": an answer carries what the runtime recorded, [] for nothing`)
	case outcome == "done":
	case outcome == "refused":
		a.Refused = true
	default:
		return fmt.Errorf(`"outcome" %q: want "done" or "refused"`, outcome)
	}
	for _, k := range a.Kinds {
		if !slices.Contains(traces.Kinds(), k) {
			return fmt.Errorf(`"kinds": %q is not a violation kind (%v)`, k, traces.Kinds())
		}
	}
	return nil
}

// parseHello reads and checks the driver's first line.
func parseHello(line []byte) (Hello, error) {
	var h Hello
	if bytes.HasPrefix(line, []byte(byteOrderMark)) {
		return Hello{}, errors.New("it starts with a byte-order mark (EF BB BF): a protocol line is JSON without one")
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return Hello{}, fmt.Errorf("not a hello object: %w", jsonProblem(err))
	}
	if h.Protocol != ProtocolName {
		return Hello{}, fmt.Errorf(`"protocol" is %q, want %q`, h.Protocol, ProtocolName)
	}
	if h.Version != ProtocolVersion {
		return Hello{}, fmt.Errorf(`"version" %d: this tlcheck speaks version %d`, h.Version, ProtocolVersion)
	}
	if len(h.Layers) == 0 {
		return Hello{}, errors.New(`"layers" is empty: name the layers of calls the driver takes (2, or 2 and 3; 5 for autograd programs)`)
	}
	for _, l := range h.Layers {
		if l != 1 && l != 2 && l != 3 && l != 5 {
			return Hello{}, fmt.Errorf(`"layers": %d is not a layer the protocol has calls for (1, 2, 3 or 5)`, l)
		}
	}
	if err := checkDepartures(h.Departures); err != nil {
		return Hello{}, err
	}
	if h.Calls != nil && len(h.Calls) == 0 {
		return Hello{}, errors.New(`"calls" is empty: leave it out to take every call of the driver's layers, or name the calls taken`)
	}
	if !slices.Contains(h.Layers, 2) && !h.Autograd() {
		return Hello{}, errors.New(`"layers" lacks 2 and 5: programs are made of layer-2 calls, or of layer-5 calls`)
	}
	for _, name := range h.Calls {
		op, ok := traces.ParseOp(name)
		if _, known := callRows[op]; ok && known {
			continue
		}
		if TensorOp(name).IsCall() && h.Autograd() {
			continue
		}
		return Hello{}, fmt.Errorf(`"calls": %q is not a call of the driver's layers`, name)
	}
	return h, nil
}

// byteOrderMark is UTF-8's, which some editors and runtimes write first.
const byteOrderMark = "\xef\xbb\xbf"

// jsonProblem says what encoding/json's error is about in the protocol's
// words: the field and what it holds, or where the JSON broke.
func jsonProblem(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		want := "a " + te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int64, reflect.Uint64:
			want = "an integer that fits 64 bits"
		case reflect.Slice:
			want = "an array"
		}
		return fmt.Errorf("%q: %s, want %s", te.Field, te.Value, want)
	case errors.As(err, &se):
		return fmt.Errorf("not JSON at byte %d: %v", se.Offset, se)
	}
	return err
}

// offers returns the set of calls the hello offers, end always among them.
func (h Hello) offers() map[traces.Op]bool {
	set := map[traces.Op]bool{traces.OpEnd: true}
	named := false // the calls name some of layers 2 and 3 (a layer-5 driver's need not)
	for _, name := range h.Calls {
		if op, ok := traces.ParseOp(name); ok && callRows[op].layer != 0 {
			set[op], named = true, true
		}
	}
	if named {
		return set
	}
	for _, l := range h.Layers {
		if l == 5 {
			continue // layer-5 programs: see tensorOffers
		}
		for _, op := range CallOps(l) {
			set[op] = true
		}
	}
	return set
}

// offered writes the calls a hello offers, for a message: its "calls",
// or every call of its layers where it names none.
func (h Hello) offered() string {
	if len(h.Calls) > 0 {
		return fmt.Sprintf("its hello offers %v", h.Calls)
	}
	return fmt.Sprintf("its hello names no calls: every call of layers %v", h.Layers)
}

// tensorOffers returns the set of layer-5 calls the hello offers (nil if
// it does not list layer 5), end always among them.
func (h Hello) tensorOffers() map[TensorOp]bool {
	if !h.Autograd() {
		return nil
	}
	set := map[TensorOp]bool{TensorEnd: true}
	for _, name := range h.Calls {
		if TensorOp(name).IsCall() {
			set[TensorOp(name)] = true
		}
	}
	if len(set) == 1 {
		for _, op := range TensorOps() {
			set[op] = true
		}
	}
	return set
}
