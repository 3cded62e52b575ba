package snapgen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// A Python value, as the encoder writes it: nil (None), bool, int, int64,
// uint64, float64, string, []any (a list), tuple (a tuple) and dict (a
// dict, in the order of its pairs, as Python keeps a dict's insertion
// order).
type (
	dict []kv
	kv   struct {
		k string
		v any
	}
	tuple []any
)

// The pickle opcodes the encoder writes: protocol 2, what Python's pickle
// writes for these values, the strings memoized as Python memoizes a
// string object met twice.
const (
	opProto      = 0x80
	opStop       = '.'
	opNone       = 'N'
	opTrue       = 0x88
	opFalse      = 0x89
	opBinInt     = 'J'
	opBinInt1    = 'K'
	opLong1      = 0x8a
	opBinFloat   = 'G'
	opBinUnicode = 'X'
	opEmptyDict  = '}'
	opEmptyList  = ']'
	opMark       = '('
	opSetItems   = 'u'
	opAppends    = 'e'
	opTuple      = 't'
	opBinPut     = 'q'
	opLongBinPut = 'r'
	opBinGet     = 'h'
	opLongBinGet = 'j'
)

// maxBatch is how many items one APPENDS or SETITEMS carries, as Python's
// pickle batches them.
const maxBatch = 1000

type encoder struct {
	w    *bufio.Writer
	memo map[string]uint32
	err  error
}

// writePickle writes v as one protocol-2 pickle.
func writePickle(w io.Writer, v any) error {
	e := &encoder{w: bufio.NewWriter(w), memo: make(map[string]uint32)}
	e.w.WriteByte(opProto)
	e.w.WriteByte(2)
	e.value(v)
	e.w.WriteByte(opStop)
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

func (e *encoder) value(v any) {
	if e.err != nil {
		return
	}
	switch v := v.(type) {
	case nil:
		e.w.WriteByte(opNone)
	case bool:
		if v {
			e.w.WriteByte(opTrue)
		} else {
			e.w.WriteByte(opFalse)
		}
	case int:
		e.int(int64(v))
	case int64:
		e.int(v)
	case uint64:
		if v > math.MaxInt64 {
			e.err = fmt.Errorf("snapgen: integer %d past 2^63", v)
			return
		}
		e.int(int64(v))
	case float64:
		e.w.WriteByte(opBinFloat)
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], math.Float64bits(v))
		e.w.Write(b[:])
	case string:
		e.str(v)
	case []any:
		e.w.WriteByte(opEmptyList)
		for i := 0; i < len(v); i += maxBatch {
			e.w.WriteByte(opMark)
			for _, it := range v[i:min(i+maxBatch, len(v))] {
				e.value(it)
			}
			e.w.WriteByte(opAppends)
		}
	case tuple:
		e.w.WriteByte(opMark)
		for _, it := range v {
			e.value(it)
		}
		e.w.WriteByte(opTuple)
	case dict:
		e.w.WriteByte(opEmptyDict)
		for i := 0; i < len(v); i += maxBatch {
			e.w.WriteByte(opMark)
			for _, p := range v[i:min(i+maxBatch, len(v))] {
				e.str(p.k)
				e.value(p.v)
			}
			e.w.WriteByte(opSetItems)
		}
	default:
		e.err = fmt.Errorf("snapgen: cannot pickle a %T", v)
	}
}

func (e *encoder) int(v int64) {
	switch {
	case v >= 0 && v < 256:
		e.w.WriteByte(opBinInt1)
		e.w.WriteByte(byte(v))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		e.w.WriteByte(opBinInt)
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(int32(v)))
		e.w.Write(b[:])
	default:
		// LONG1: the shortest two's-complement little-endian bytes.
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		n := 8
		for n > 1 && (b[n-1] == 0 && b[n-2]&0x80 == 0 || b[n-1] == 0xff && b[n-2]&0x80 != 0) {
			n--
		}
		e.w.WriteByte(opLong1)
		e.w.WriteByte(byte(n))
		e.w.Write(b[:n])
	}
}

func (e *encoder) str(s string) {
	if i, ok := e.memo[s]; ok {
		if i < 256 {
			e.w.WriteByte(opBinGet)
			e.w.WriteByte(byte(i))
		} else {
			e.w.WriteByte(opLongBinGet)
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], i)
			e.w.Write(b[:])
		}
		return
	}
	e.w.WriteByte(opBinUnicode)
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(len(s)))
	e.w.Write(b[:])
	e.w.WriteString(s)
	i := uint32(len(e.memo))
	e.memo[s] = i
	if i < 256 {
		e.w.WriteByte(opBinPut)
		e.w.WriteByte(byte(i))
	} else {
		e.w.WriteByte(opLongBinPut)
		binary.LittleEndian.PutUint32(b[:], i)
		e.w.Write(b[:])
	}
}
