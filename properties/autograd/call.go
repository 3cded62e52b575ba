package autograd

// Call is one call of a layer-5 program. Tensors are named by handles
// that the harness fixes before the run: a call that makes a tensor gives
// it Handle; the calls after it name it by that number (A, B, Target).
// Everything is float64.
type Call struct {
	Op           Op
	Handle       int       // a call that makes a tensor: its handle
	Target       int       // in-place ops, backward, zero_grad, retain_grad, drop
	A, B         int       // operands; B also for an in-place op by a tensor
	Shape        []int     // leaf, reshape: [] is zero-dimensional
	Values       []float64 // leaf: row-major, as many as the shape holds
	RequiresGrad bool      // leaf
	Exponent     float64   // pow
	Start, Stop  int       // slice: a[Start:Stop] along dimension 0
	Scalar       float64   // an in-place op by a number (ByScalar)
	ByScalar     bool      // the in-place op is by Scalar, not by tensor B
	RetainGraph  bool      // backward
	NoGrad       bool      // any call: made under torch.no_grad()
}

// Fields returns the fields c carries on the wire: its op's required ones
// and, for an in-place op, "scalar" or "b" as ByScalar says.
func (c *Call) Fields() Field {
	required, optional := c.Op.Fields()
	if optional != 0 {
		if c.ByScalar {
			required |= FScalar
		} else {
			required |= FB
		}
	}
	return required
}

// Uses reports whether c names a handle of set (as an operand or target).
func (c *Call) Uses(set map[int]bool) bool {
	f := c.Fields()
	return f&FA != 0 && set[c.A] || f&FB != 0 && set[c.B] || f&FTarget != 0 && set[c.Target]
}
