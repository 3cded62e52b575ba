package drive

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TfjsOp is a call of a tfjs program: an operation of TensorFlow.js's
// memory API on tensors, variables and optimizers named by handle
// (PROTOCOL.md, "tfjs programs").
type TfjsOp string

// The calls of tfjs programs.
const (
	TfjsTensor           TfjsOp = "tensor"           // tf.tensor(values, shape)
	TfjsNeg              TfjsOp = "neg"              // tf.neg(a), and the other unary ops
	TfjsExp              TfjsOp = "exp"              //
	TfjsSquare           TfjsOp = "square"           //
	TfjsRelu             TfjsOp = "relu"             //
	TfjsAbs              TfjsOp = "abs"              //
	TfjsTanh             TfjsOp = "tanh"             //
	TfjsAdd              TfjsOp = "add"              // tf.add(a, b), with broadcasting, and the other binary ops
	TfjsSub              TfjsOp = "sub"              //
	TfjsMul              TfjsOp = "mul"              //
	TfjsMaximum          TfjsOp = "maximum"          //
	TfjsSum              TfjsOp = "sum"              // tf.sum(a): every axis
	TfjsMean             TfjsOp = "mean"             // tf.mean(a)
	TfjsMatMul           TfjsOp = "matMul"           // tf.matMul(a, b)
	TfjsReshape          TfjsOp = "reshape"          // tf.reshape(a, shape): shares a's buffer
	TfjsClone            TfjsOp = "clone"            // tf.clone(a): shares a's buffer
	TfjsExpandDims       TfjsOp = "expandDims"       // tf.expandDims(a, 0): shares a's buffer
	TfjsSqueeze          TfjsOp = "squeeze"          // tf.squeeze(a): shares a's buffer
	TfjsTidy             TfjsOp = "tidy"             // tf.tidy(f): the calls up to its tidy_end or tidy_throw are f's
	TfjsTidyEnd          TfjsOp = "tidy_end"         // f returns the tensors of result, as container
	TfjsTidyThrow        TfjsOp = "tidy_throw"       // f throws
	TfjsKeep             TfjsOp = "keep"             // tf.keep(target)
	TfjsDispose          TfjsOp = "dispose"          // targets[0].dispose(), or tf.dispose(the container of targets)
	TfjsVariable         TfjsOp = "variable"         // tf.variable(a)
	TfjsAssign           TfjsOp = "assign"           // target.assign(a)
	TfjsDisposeVariables TfjsOp = "disposeVariables" // tf.disposeVariables()
	TfjsGrad             TfjsOp = "grad"             // tf.grad(fn)(a)
	TfjsGrads            TfjsOp = "grads"            // tf.grads(fn)([a, b]), into handles
	TfjsValueAndGrad     TfjsOp = "valueAndGrad"     // tf.valueAndGrad(fn)(a), into handles [value, grad]
	TfjsVariableGrads    TfjsOp = "variableGrads"    // tf.variableGrads(fn over vars, vars), into handles [value, grad...]
	TfjsOptimizer        TfjsOp = "optimizer"        // tf.train.sgd(0.1), momentum(0.1, 0.9) or adam(0.1), by kind
	TfjsMinimize         TfjsOp = "minimize"         // target.minimize(fn over vars, false, vars)
	TfjsDataSync         TfjsOp = "dataSync"         // target.dataSync()
	TfjsArraySync        TfjsOp = "arraySync"        // target.arraySync()
	TfjsEnd              TfjsOp = "end"              // the program is over: the driver disposes what it holds
)

// TfjsOps lists every call of tfjs programs.
var TfjsOps = []TfjsOp{TfjsTensor, TfjsNeg, TfjsExp, TfjsSquare, TfjsRelu, TfjsAbs, TfjsTanh,
	TfjsAdd, TfjsSub, TfjsMul, TfjsMaximum, TfjsSum, TfjsMean, TfjsMatMul,
	TfjsReshape, TfjsClone, TfjsExpandDims, TfjsSqueeze,
	TfjsTidy, TfjsTidyEnd, TfjsTidyThrow, TfjsKeep, TfjsDispose,
	TfjsVariable, TfjsAssign, TfjsDisposeVariables,
	TfjsGrad, TfjsGrads, TfjsValueAndGrad, TfjsVariableGrads,
	TfjsOptimizer, TfjsMinimize, TfjsDataSync, TfjsArraySync, TfjsEnd}

func (op TfjsOp) unary() bool {
	switch op {
	case TfjsNeg, TfjsExp, TfjsSquare, TfjsRelu, TfjsAbs, TfjsTanh, TfjsSum, TfjsMean,
		TfjsClone, TfjsExpandDims, TfjsSqueeze, TfjsReshape:
		return true
	}
	return false
}

func (op TfjsOp) binary() bool {
	switch op {
	case TfjsAdd, TfjsSub, TfjsMul, TfjsMaximum, TfjsMatMul:
		return true
	}
	return false
}

// TfjsCall is one call of a tfjs program. Handles name what the program
// made, from 1 in the order made; a call that makes something carries its
// handle (or handles), one that uses something names it by a, b, target,
// targets or vars.
type TfjsCall struct {
	Op        TfjsOp    `json:"op"`
	Handle    int       `json:"handle,omitempty"`
	Handles   []int     `json:"handles,omitempty"`
	A         int       `json:"a,omitempty"`
	B         int       `json:"b,omitempty"`
	Target    int       `json:"target,omitempty"`
	Targets   []int     `json:"targets,omitempty"`
	Vars      []int     `json:"vars,omitempty"`
	Shape     []int     `json:"shape,omitempty"`
	Values    []float64 `json:"values,omitempty"`
	Result    []int     `json:"result,omitempty"`
	Container string    `json:"container,omitempty"` // "tensor", "array", "object"; tidy_end: also "none"
	Fn        string    `json:"fn,omitempty"`        // a loss: sumSquare, meanExp, sumRelu (of one tensor); sumMul, sumAdd (of two)
	Kind      string    `json:"kind,omitempty"`      // an optimizer: sgd, momentum, adam
}

// made lists the handles the call makes.
func (c *TfjsCall) made() []int {
	if c.Handle != 0 {
		return []int{c.Handle}
	}
	if c.Op == TfjsGrads || c.Op == TfjsValueAndGrad || c.Op == TfjsVariableGrads {
		return c.Handles
	}
	return nil
}

// uses lists the handles the call names.
func (c *TfjsCall) uses() []int {
	var u []int
	for _, h := range []int{c.A, c.B, c.Target} {
		if h != 0 {
			u = append(u, h)
		}
	}
	u = append(u, c.Targets...)
	u = append(u, c.Vars...)
	return append(u, c.Result...)
}

func (c *TfjsCall) appendJSON(b []byte, id int64) []byte {
	j, err := json.Marshal(c)
	if err != nil { // a TfjsCall always marshals: ints, strings, finite floats
		panic(fmt.Sprintf("drive: a tfjs call does not marshal: %v", err))
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ',')
	return append(b, j[1:]...)
}

// String is the call as a line of a calls file.
func (c TfjsCall) String() string {
	j, _ := json.Marshal(c)
	return string(j)
}

// WriteTfjsCalls writes a tfjs program as a calls file: comment lines
// first, then one call a line.
func WriteTfjsCalls(w io.Writer, calls []TfjsCall, comments ...string) error {
	var b strings.Builder
	for _, c := range comments {
		for _, l := range strings.Split(c, "\n") {
			b.WriteString("# " + l + "\n")
		}
	}
	for _, c := range calls {
		b.WriteString(c.String() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ReadTfjsCalls reads a calls file of a tfjs program; an "id" on a line
// is ignored, and the program is checked to be well formed (see
// CheckTfjsProgram).
func ReadTfjsCalls(r io.Reader) ([]TfjsCall, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("drive: reading tfjs calls: %w", err)
	}
	var calls []TfjsCall
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var c TfjsCall
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return nil, fmt.Errorf("drive: tfjs calls, line %d: %w", n+1, err)
		}
		calls = append(calls, c)
	}
	if err := CheckTfjsProgram(calls); err != nil {
		return nil, err
	}
	return calls, nil
}
