package impldriver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// call5 is a layer-5 call as the protocol sends it. (Provisional: drive's
// wire types replace it.)
type call5 struct {
	ID           int64     `json:"id"`
	Op           string    `json:"op"`
	Handle       int       `json:"handle"`
	A            int       `json:"a"`
	B            int       `json:"b"`
	Target       int       `json:"target"`
	Shape        []int     `json:"shape"`
	Values       []float64 `json:"-"`
	RawValues    []jfloat  `json:"values"`
	RequiresGrad bool      `json:"requires_grad"`
	Exponent     float64   `json:"-"`
	RawExponent  *jfloat   `json:"exponent"`
	Start        int       `json:"start"`
	Stop         int       `json:"stop"`
	Scalar       *float64  `json:"-"`
	RawScalar    *jfloat   `json:"scalar"`
	RetainGraph  bool      `json:"retain_graph"`
	NoGrad       bool      `json:"no_grad"`
}

// jfloat is a protocol number: a JSON number, or "nan", "inf", "-inf".
type jfloat float64

func (f *jfloat) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case `"nan"`:
		*f = jfloat(math.NaN())
	case `"inf"`:
		*f = jfloat(math.Inf(1))
	case `"-inf"`:
		*f = jfloat(math.Inf(-1))
	default:
		var v float64
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("%s is not a number", b)
		}
		*f = jfloat(v)
	}
	return nil
}

func parseCall5(line []byte) (call5, error) {
	var c call5
	if err := json.Unmarshal(line, &c); err != nil {
		return c, err
	}
	for _, v := range c.RawValues {
		c.Values = append(c.Values, float64(v))
	}
	if c.RawExponent != nil {
		c.Exponent = float64(*c.RawExponent)
	}
	if c.RawScalar != nil {
		v := float64(*c.RawScalar)
		c.Scalar = &v
	}
	return c, nil
}
