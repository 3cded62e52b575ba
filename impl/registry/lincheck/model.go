package lincheck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/tlcheck/tlcheck/impl/registry"
)

// Addrs is the number of addresses the workload uses: few, so that
// goroutines collide on them.
const Addrs = 6

// Addr returns the address of slot i, and Size the size a block there has.
func Addr(i int) registry.Ptr { return registry.Ptr(0x1000 + 0x100*i) }
func Size(i int) uint64       { return uint64(16 * (i + 1)) }

// OpKind is a registry call.
type OpKind uint8

const (
	OpRegister OpKind = iota
	OpRegisterBuffer
	OpAlias
	OpUnregister
	OpIsRegistered
	OpTotalBytes
	OpPointers
	OpBuffers
)

var opNames = [...]string{"register", "register_buffer", "alias", "unregister", "is_registered", "total_bytes", "pointers", "buffers"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("op(%d)", int(k))
}

// Input is a call: the operation, the slot it acts on (the alias for
// OpAlias), the real pointer's slot for OpAlias, a buffer's kind.
type Input struct {
	Op   OpKind
	Slot int
	Real int
	Kind registry.Kind
}

// ErrCode is an error as the model sees it: which sentinel, if any.
type ErrCode uint8

const (
	ErrNone ErrCode = iota
	ErrNull
	ErrRegistered
	ErrHeld
	ErrNotRegistered
	ErrNotBuffer
	ErrOther // an error the contract does not know: never linearizable
)

var errNames = [...]string{"ok", "null", "registered", "held", "not-registered", "not-buffer", "other"}

func (c ErrCode) String() string { return errNames[c] }

// Code classifies a registry error.
func Code(err error) ErrCode {
	for _, c := range []struct {
		err  error
		code ErrCode
	}{{registry.ErrNull, ErrNull}, {registry.ErrRegistered, ErrRegistered}, {registry.ErrHeld, ErrHeld},
		{registry.ErrNotRegistered, ErrNotRegistered}, {registry.ErrNotBuffer, ErrNotBuffer}} {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	if err != nil {
		return ErrOther
	}
	return ErrNone
}

// Output is what a call returned: its error, the block an unregister
// freed, a query's value.
type Output struct {
	Err   ErrCode
	Freed registry.Block
	Value uint64
}

// name kinds in the model's state.
const (
	free uint8 = iota
	plain
	real
	alias
)

// state is the sequential registry over the workload's slots. It is an
// array value, so porcupine compares states with == and steps copy them.
type state struct {
	name  [Addrs]uint8 // free, plain, real or alias
	owner [Addrs]int8  // an alias's buffer: the slot of its real pointer
	live  [Addrs]bool  // a buffer is live whose real pointer is this slot
	kind  [Addrs]registry.Kind
	count [Addrs]int8
}

// step is the contract, one call at a time: the output a call must give
// in s, and the state after it.
func step(s state, in Input) (Output, state) {
	i := in.Slot
	taken := func(i int) ErrCode {
		switch {
		case s.name[i] != free:
			return ErrRegistered
		case s.live[i]:
			return ErrHeld
		}
		return ErrNone
	}
	switch in.Op {
	case OpRegister, OpRegisterBuffer:
		if e := taken(i); e != ErrNone {
			return Output{Err: e}, s
		}
		if in.Op == OpRegister {
			s.name[i] = plain
		} else {
			s.name[i], s.live[i], s.kind[i], s.count[i] = real, true, in.Kind, 1
		}
	case OpAlias:
		r := in.Real
		switch {
		case s.name[r] == free:
			return Output{Err: ErrNotRegistered}, s
		case s.name[r] != real:
			return Output{Err: ErrNotBuffer}, s
		}
		if e := taken(i); e != ErrNone {
			return Output{Err: e}, s
		}
		s.name[i], s.owner[i] = alias, int8(r)
		s.count[r]++
	case OpUnregister:
		var r int
		switch s.name[i] {
		case free:
			return Output{Err: ErrNotRegistered}, s
		case plain:
			s.name[i] = free
			return Output{Freed: registry.Block{Ptr: Addr(i), Size: Size(i), Kind: registry.KindHeap}}, s
		case real:
			r = i
		case alias:
			r = int(s.owner[i])
			s.owner[i] = 0
		}
		s.name[i] = free
		if s.count[r]--; s.count[r] > 0 {
			return Output{}, s
		}
		k := s.kind[r]
		s.live[r], s.kind[r] = false, 0
		return Output{Freed: registry.Block{Ptr: Addr(r), Size: Size(r), Kind: k}}, s
	case OpIsRegistered:
		if s.name[i] != free {
			return Output{Value: 1}, s
		}
	case OpTotalBytes, OpPointers, OpBuffers:
		var v uint64
		for j := range Addrs {
			switch in.Op {
			case OpTotalBytes:
				if s.name[j] == plain || s.live[j] {
					v += Size(j)
				}
			case OpPointers:
				if s.name[j] != free {
					v++
				}
			case OpBuffers:
				if s.live[j] {
					v++
				}
			}
		}
		return Output{Value: v}, s
	}
	return Output{}, s
}

// Model is the registry's sequential specification for porcupine.
func Model() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return state{} },
		Step: func(st, in, out any) (bool, any) {
			want, next := step(st.(state), in.(Input))
			return want == out.(Output), next
		},
		Equal: func(a, b any) bool { return a.(state) == b.(state) },
		Hash: func(st any) uint64 {
			s := st.(state)
			h := uint64(14695981039346656037)
			for j := range Addrs {
				for _, b := range []byte{s.name[j], byte(s.owner[j]), b2u(s.live[j]), byte(s.kind[j]), byte(s.count[j])} {
					h = (h ^ uint64(b)) * 1099511628211
				}
			}
			return h
		},
		DescribeOperation: func(in, out any) string { return describe(in.(Input), out.(Output)) },
		DescribeState:     func(st any) string { return describeState(st.(state)) },
	}
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func describe(in Input, out Output) string {
	var call string
	switch in.Op {
	case OpRegister, OpUnregister, OpIsRegistered:
		call = fmt.Sprintf("%s(%s)", in.Op, Addr(in.Slot))
	case OpRegisterBuffer:
		call = fmt.Sprintf("%s(%s, %s)", in.Op, Addr(in.Slot), in.Kind)
	case OpAlias:
		call = fmt.Sprintf("alias(%s, %s)", Addr(in.Real), Addr(in.Slot))
	default:
		call = in.Op.String() + "()"
	}
	switch {
	case out.Err != ErrNone:
		return call + " -> " + out.Err.String()
	case out.Freed.Ptr != 0:
		return fmt.Sprintf("%s -> freed %s (%d B, %s)", call, out.Freed.Ptr, out.Freed.Size, out.Freed.Kind)
	case in.Op >= OpIsRegistered:
		return fmt.Sprintf("%s -> %d", call, out.Value)
	}
	return call + " -> ok"
}

func describeState(s state) string {
	var parts []string
	for j := range Addrs {
		switch s.name[j] {
		case plain:
			parts = append(parts, fmt.Sprintf("%s plain", Addr(j)))
		case real:
			parts = append(parts, fmt.Sprintf("%s buffer", Addr(j)))
		case alias:
			parts = append(parts, fmt.Sprintf("%s alias of %s", Addr(j), Addr(int(s.owner[j]))))
		}
		if s.live[j] {
			parts = append(parts, fmt.Sprintf("%s count %d", Addr(j), s.count[j]))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
