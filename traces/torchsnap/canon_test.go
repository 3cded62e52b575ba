package torchsnap

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	ogorek "github.com/kisielk/og-rek"
)

// decodeGeneric runs the machine with no snapshot shape: every container
// holds its items, as Python's unpickler builds them.
func decodeGeneric(data []byte) (val, error) {
	m := &machine{
		in:  bufio.NewReader(bytes.NewReader(data)),
		lim: limits{maxString: defaultMaxString, maxStack: defaultMaxStack, maxHeld: 1 << 22, generic: true},
	}
	return m.run()
}

// errTooLong is a value whose canonical form would be too long to compare.
var errTooLong = errors.New("too long")

const canonLimit = 1 << 20

// canon writes the canonical form of a value the machine decoded, as
// testdata/pickle_oracle.py writes Python's.
func canon(v val) (string, error) {
	c := canoner{busy: make(map[*obj]bool)}
	s := c.val(v)
	return s, c.err
}

type canoner struct {
	busy map[*obj]bool
	size int
	err  error
}

func (c *canoner) val(v val) string {
	c.size++
	if c.size > canonLimit {
		c.err = errTooLong
		return ""
	}
	switch v.k {
	case kNone:
		return "N"
	case kBool:
		return map[bool]string{true: "T", false: "F"}[v.i != 0]
	case kInt:
		return "i" + strconv.FormatInt(v.i, 16)
	case kUint:
		return "i" + strconv.FormatUint(uint64(v.i), 16)
	case kBig:
		return "i" + (*big.Int)(v.p).Text(16)
	case kFloat:
		f := math.Float64frombits(uint64(v.i))
		if math.IsNaN(f) {
			return "fnan"
		}
		return fmt.Sprintf("f%016x", uint64(v.i))
	case kStr:
		c.size += 2 * int(v.i)
		return "s" + hex.EncodeToString([]byte(v.str()))
	case kBytes:
		c.size += 2 * int(v.i)
		return "b" + hex.EncodeToString(unsafe.Slice((*byte)(v.p), v.i))
	case kObj:
		o := v.obj()
		if c.busy[o] {
			return "<cycle>"
		}
		c.busy[o] = true
		defer delete(c.busy, o)
		switch o.kind {
		case 'l', 't':
			parts := make([]string, len(o.items()))
			for i, it := range o.items() {
				parts[i] = c.val(it)
			}
			open, end := "[", "]"
			if o.kind == 't' {
				open, end = "(", ")"
			}
			return open + strings.Join(parts, ",") + end
		case 'd':
			byKey := map[string]string{}
			items := o.items()
			for i := 0; i < len(items); i += 2 {
				k := c.key(items[i])
				if strings.Contains(k, "fnan") {
					c.err = errors.New("a NaN key")
				}
				byKey[k] = c.val(items[i+1])
			}
			var parts []string
			for k, x := range byKey {
				parts = append(parts, k+":"+x)
			}
			slices.Sort(parts)
			return "{" + strings.Join(parts, ",") + "}"
		}
	}
	c.err = fmt.Errorf("no canonical form for kind %d", v.k)
	return ""
}

// key is a dict key's canonical form: numbers by value, as Python holds
// 1, 1.0 and True to be one key.
func (c *canoner) key(v val) string {
	c.size++
	if c.size > canonLimit {
		c.err = errTooLong
		return ""
	}
	switch v.k {
	case kBool:
		return "i" + strconv.FormatInt(v.i, 16)
	case kFloat:
		f := math.Float64frombits(uint64(v.i))
		if !math.IsInf(f, 0) && !math.IsNaN(f) && f == math.Trunc(f) {
			z, _ := new(big.Float).SetFloat64(f).Int(nil)
			return "i" + z.Text(16)
		}
	case kObj:
		if o := v.obj(); o.kind == 't' {
			parts := make([]string, len(o.items()))
			for i, it := range o.items() {
				parts[i] = c.key(it)
			}
			return "(" + strings.Join(parts, ",") + ")"
		}
	}
	return c.val(v)
}

// canonOgrek writes the canonical form of what og-rek decoded.
func canonOgrek(v any) (string, error) {
	switch x := v.(type) {
	case ogorek.None:
		return "N", nil
	case bool:
		return map[bool]string{true: "T", false: "F"}[x], nil
	case int64:
		return "i" + strconv.FormatInt(x, 16), nil
	case *big.Int:
		return "i" + x.Text(16), nil
	case float64:
		if math.IsNaN(x) {
			return "fnan", nil
		}
		return fmt.Sprintf("f%016x", math.Float64bits(x)), nil
	case string:
		return "s" + hex.EncodeToString([]byte(x)), nil
	case ogorek.Bytes:
		return "b" + hex.EncodeToString([]byte(x)), nil
	case []any, ogorek.Tuple:
		items, open, end := []any(nil), "[", "]"
		if t, ok := x.(ogorek.Tuple); ok {
			items, open, end = []any(t), "(", ")"
		} else {
			items = x.([]any)
		}
		parts := make([]string, len(items))
		for i, it := range items {
			s, err := canonOgrek(it)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return open + strings.Join(parts, ",") + end, nil
	case map[any]any:
		var parts []string
		keys := map[string]bool{}
		for k, it := range x {
			ks, err := canonOgrek(k)
			if err != nil {
				return "", err
			}
			// og-rek keeps 1 and 1.0 as two keys, which Python holds to
			// be one: such a dict has no value to compare.
			if f, ok := k.(float64); ok && f == math.Trunc(f) && !math.IsInf(f, 0) {
				z, _ := new(big.Float).SetFloat64(f).Int(nil)
				ks = "i" + z.Text(16)
			} else if b, ok := k.(bool); ok {
				ks = map[bool]string{true: "i1", false: "i0"}[b]
			}
			if keys[ks] {
				return "", errors.New("keys Python holds equal")
			}
			keys[ks] = true
			s, err := canonOgrek(it)
			if err != nil {
				return "", err
			}
			parts = append(parts, ks+":"+s)
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ",") + "}", nil
	}
	return "", fmt.Errorf("og-rek value of type %T", v)
}

func (o *obj) items() []val {
	if o.x == nil {
		return nil
	}
	return o.x.items
}
