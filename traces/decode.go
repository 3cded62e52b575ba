package traces

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
)

// The event decoder: one JSON object into an Event, checked against its op's
// fields (fields.go). Keys may come in any order; a repeated key's last value
// wins; unknown keys are skipped whatever their value.

// maxSlot bounds slots and slot: a frame's slot count fits 32 bits.
const maxSlot = math.MaxInt32

// decodeEvent reads the event object whose '{' is next into ev; line is the
// line the event starts on, which errors about missing fields name.
func (r *Reader) decodeEvent(ev *Event, line int) error {
	l := &r.lex
	*ev = Event{Fields: ev.Fields[:0]}
	var seen, null fieldSet
	l.r++
	c := l.skipSpace()
	if c == '}' {
		l.r++
		return fieldErr(fieldOp, line, errors.New("missing: every event needs an op"))
	}
	for {
		if c != '"' {
			return l.syntax("a field name in double quotes", c)
		}
		key, err := l.readKey()
		if err != nil {
			return err
		}
		f := lookupField(key)
		// Compact JSON has the colon and the value right after the key:
		// take them without a call (the lexer's methods do not inline).
		if l.r+1 < l.w && l.buf[l.r] == ':' && l.buf[l.r+1] > ' ' {
			l.r++
			c = int(l.buf[l.r])
		} else {
			if err := l.colon(); err != nil {
				return err
			}
			c = l.skipSpace()
		}
		switch {
		case f == fieldUnknown:
			err = l.skipValue(0)
		case c == 'n' && f != fieldOp:
			if _, err = l.readLiteral(); err == nil {
				clearFields(ev, f.bit())
				seen &^= f.bit()
				null |= f.bit()
			}
		default:
			err = r.decodeField(ev, f, c)
			seen |= f.bit()
		}
		if err != nil {
			if f != fieldUnknown {
				err = fieldErr(f, 0, err)
			}
			return err
		}
		if l.r+1 < l.w && l.buf[l.r] == ',' && l.buf[l.r+1] == '"' {
			l.r++
			c = '"'
			continue
		}
		switch c = l.skipSpace(); c {
		case ',':
			l.r++
			c = l.skipSpace()
			continue
		case '}':
			l.r++
		default:
			return l.syntax(", or }", c)
		}
		break
	}
	if seen&fieldOp.bit() == 0 {
		return fieldErr(fieldOp, line, errors.New("missing: every event needs an op"))
	}
	spec := &opSpecs[ev.Op]
	if missing := spec.req &^ seen; missing != 0 {
		for _, f := range spec.required {
			if missing&f.bit() == 0 {
				continue
			}
			if null&f.bit() != 0 {
				return fieldErr(f, line, errWant(wantOf(f), []byte("null")))
			}
			return fieldErr(f, line, errors.New("missing: "+describeOp(ev.Op)))
		}
	}
	if extra := seen &^ (spec.req | spec.opt); extra != 0 {
		clearFields(ev, extra)
	}
	if seen&fieldSize.bit() != 0 && (spec.req|spec.opt)&fieldSize.bit() != 0 {
		// The block the size measures must lie below 2^64 (one that ends
		// at 2^64 exactly has its last byte at 2^64-1): realloc's at its
		// new address, every other op's at its address.
		at := ev.Addr
		if ev.Op == OpRealloc {
			at = ev.NewAddr
		}
		if end, carry := bits.Add64(uint64(at), ev.Size, 0); carry != 0 && end != 0 {
			return fieldErr(fieldSize, line, errors.New("address "+at.String()+" plus size "+strconv.FormatUint(ev.Size, 10)+" passes 2^64"))
		}
	}
	if ev.Op != OpRead && ev.Op != OpWrite {
		ev.HasSize = false
	}
	return nil
}

// decodeField reads the value of a known field, whose first byte c is next.
func (r *Reader) decodeField(ev *Event, f field, c int) error {
	l := &r.lex
	switch f {
	case fieldOp:
		if c != '"' {
			return r.wrongType(wantString, c)
		}
		name, err := l.readString()
		if err != nil {
			return err
		}
		if ev.Op = lookupOp(name); ev.Op == OpInvalid {
			return errors.New("unknown op " + quoteGot([]byte(strconv.Quote(string(name)))))
		}
	case fieldAddr, fieldNewAddr:
		a, err := r.addr(c)
		if err != nil {
			return err
		}
		if f == fieldAddr {
			ev.Addr = a
		} else {
			ev.NewAddr = a
		}
	case fieldSize:
		v, err := r.uint(c, math.MaxUint64)
		ev.Size, ev.HasSize = v, err == nil
		return err
	case fieldStream:
		v, err := r.uint(c, math.MaxUint64)
		ev.Stream = v
		return err
	case fieldRefs:
		v, err := r.uint(c, math.MaxUint64)
		ev.Count, ev.HasCount = v, err == nil
		return err
	case fieldSlots, fieldSlot:
		v, err := r.uint(c, maxSlot)
		if f == fieldSlots {
			ev.Slots = int(v)
		} else {
			ev.Slot = int(v)
		}
		return err
	case fieldT:
		if c != '-' && !isDigit(byte(c)) {
			return r.wrongType(wantInt, c)
		}
		n, err := l.readNumber()
		if err != nil {
			return err
		}
		t, ok := n.int64()
		if !ok {
			return errWant(wantInt, overGot(n.lit, n.integral))
		}
		ev.T = t
	case fieldFields:
		return r.addrs(ev, c)
	case fieldSpace:
		s, err := r.string(c, wantSpace)
		if err != nil {
			return err
		}
		switch string(s) {
		case "heap":
			ev.Space = SpaceHeap
		case "device":
			ev.Space = SpaceDevice
		default:
			return errWant(wantSpace, []byte(strconv.Quote(string(s))))
		}
	case fieldThread:
		if c == '-' || isDigit(byte(c)) {
			n, err := l.readNumber()
			if err != nil {
				return err
			}
			if !n.integral {
				return errWant(wantThread, n.lit)
			}
			ev.Thread = r.names.intern(n.lit)
			return nil
		}
		s, err := r.string(c, wantThread)
		if err != nil {
			return err
		}
		ev.Thread = r.names.intern(s)
	case fieldKind, fieldName, fieldVar, fieldSite:
		s, err := r.string(c, wantString)
		if err != nil {
			return err
		}
		str := r.names.intern(s)
		switch f {
		case fieldKind:
			ev.Kind = str
		case fieldName:
			ev.Name = str
		case fieldVar:
			ev.Var = str
		case fieldSite:
			ev.Site = str
		}
	default:
		// A field of the table that this switch lacks: TestFieldTable
		// names it.
		return errors.New("no decoder for this field (decodeField, decode.go)")
	}
	return nil
}
