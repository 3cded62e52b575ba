package snapgen

import (
	"fmt"

	"github.com/tlcheck/tlcheck/traces"
)

// The Python files of the stacks: the user's script and model, and
// PyTorch's own, where a pip install puts them.
const (
	script   = "train.py"
	modelPy  = "model.py"
	torchDir = "/opt/conda/lib/python3.11/site-packages/torch/"
	linearPy = torchDir + "nn/modules/linear.py"
	modulePy = torchDir + "nn/modules/module.py"
	actPy    = torchDir + "nn/modules/activation.py"
	funcPy   = torchDir + "nn/functional.py"
	tensorPy = torchDir + "_tensor.py"
	graphPy  = torchDir + "autograd/graph.py"
	adamwPy  = torchDir + "optim/adamw.py"
	optimPy  = torchDir + "optim/optimizer.py"
)

// The script's lines, as train.py would have them.
const (
	lineModel    = 20 // model = Net().cuda()
	lineInput    = 31 // x = batch.cuda()
	lineTarget   = 32 // y = target.cuda()
	lineForward  = 33 // out = model(x)
	lineLoss     = 34 // loss = F.cross_entropy(out, y)
	lineBackward = 35 // loss.backward()
	lineStep     = 36 // opt.step()
	lineZero     = 37 // opt.zero_grad()
	lineRequest  = 60 // buf = torch.empty(n, device="cuda")
)

// InputSite is the site of a step's input (the script's line 31): the
// iteration marker of every generated loop.
const InputSite = script + ":31"

// LossSite is the site of cross_entropy's loss, the block KeepLoss keeps.
const LossSite = funcPy + ":3494"

// KeptSites are the sites whose blocks the loop keeps every iteration,
// sorted: what a leak detector must name, and nothing else. A kept graph
// keeps its input (saved by the first Linear), each ReLU's output (saved
// by it and the next Linear) and the head's output (kept by the list).
func (l Loop) KeptSites() []string {
	switch l {
	case KeepLoss:
		return []string{LossSite}
	case KeepGraph:
		return []string{funcPy + ":1704", linearPy + ":125", InputSite}
	}
	return nil
}

func at(line int, name string) Frame { return Frame{script, line, name} }

// called is a module call from the script's line: Module.__call__'s frames
// over forward's.
func called(inner []Frame, line int) []Frame {
	fs := append([]Frame(nil), inner...)
	return append(fs, Frame{modulePy, 1747, "_call_impl"}, Frame{modulePy, 1736, "_wrapped_call_impl"}, at(line, "<module>"))
}

// stacks are the loop's stacks, made once.
type stacks struct {
	param, input, target, linear, relu, head, logSoftmax, loss []Frame
	backward, state, adamw, zero, request                      []Frame
	layerParam                                                 [][]Frame
}

func newStacks(layers int) *stacks {
	s := &stacks{
		input:      []Frame{at(lineInput, "<module>")},
		target:     []Frame{at(lineTarget, "<module>")},
		linear:     called([]Frame{{linearPy, 125, "forward"}, {modelPy, 14, "forward"}}, lineForward),
		relu:       called([]Frame{{funcPy, 1704, "relu"}, {actPy, 133, "forward"}, {modelPy, 15, "forward"}}, lineForward),
		head:       called([]Frame{{linearPy, 125, "forward"}, {modelPy, 16, "forward"}}, lineForward),
		logSoftmax: []Frame{{funcPy, 3494, "cross_entropy"}, at(lineLoss, "<module>")},
		loss:       []Frame{{funcPy, 3494, "cross_entropy"}, at(lineLoss, "<module>")},
		backward:   []Frame{{graphPy, 825, "_engine_run_backward"}, {tensorPy, 626, "backward"}, at(lineBackward, "<module>")},
		state:      []Frame{{adamwPy, 111, "_init_group"}, {adamwPy, 213, "step"}, {optimPy, 485, "wrapper"}, at(lineStep, "<module>")},
		adamw:      []Frame{{adamwPy, 596, "_multi_tensor_adamw"}, {adamwPy, 238, "step"}, {optimPy, 485, "wrapper"}, at(lineStep, "<module>")},
		zero:       []Frame{{optimPy, 941, "zero_grad"}, at(lineZero, "<module>")},
		request:    []Frame{at(lineRequest, "<module>")},
	}
	for l := 0; l <= layers; l++ {
		s.layerParam = append(s.layerParam, []Frame{{linearPy, 106, "__init__"}, {modelPy, 9 + l, "__init__"}, at(lineModel, "<module>")})
	}
	return s
}

// run is the script: the model, the loop, and the last request.
func (g *gen) run() error {
	c := g.cfg
	h, v, f32 := uint64(c.Hidden), uint64(c.Vocab), uint64(4)
	st := newStacks(c.Layers)

	// The model: Layers hidden Linear(h, h) and a head Linear(h, v).
	var params []uint64 // each parameter's bytes
	for l := 0; l <= c.Layers; l++ {
		out := h
		if l == c.Layers {
			out = v
		}
		params = append(params, out*h*f32, out*f32)
	}
	for i, n := range params {
		if _, err := g.malloc(n, st.layerParam[i/2]); err != nil {
			return err
		}
	}

	var prevX, prevY, prevLoss traces.Addr
	var state []traces.Addr // AdamW's exp_avg and exp_avg_sq, made at the first step
	for step := 0; step < c.Steps; step++ {
		if c.RecordFrom > 0 && step == c.RecordFrom {
			g.recStart = len(g.all)
		}
		g.iterStart = append(g.iterStart, len(g.all))
		if err := g.step(st, step, params, &prevX, &prevY, &prevLoss, &state); err != nil {
			return err
		}
		if g.err != nil {
			return fmt.Errorf("snapgen: step %d: %w", step, g.err)
		}
	}
	if c.RecordFrom > 0 && c.RecordFrom >= c.Steps {
		g.recStart = len(g.all)
	}
	if c.Request > 0 {
		_, err := g.malloc(c.Request, st.request)
		return err
	}
	return nil
}

// step is one iteration of the loop.
func (g *gen) step(st *stacks, step int, params []uint64, prevX, prevY, prevLoss *traces.Addr, state *[]traces.Addr) error {
	c := g.cfg
	rows := g.rows()
	h, v, f32 := uint64(c.Hidden), uint64(c.Vocab), uint64(4)
	var err error
	m := func(n uint64, fs []Frame) traces.Addr {
		if err != nil {
			return 0
		}
		var a traces.Addr
		a, err = g.malloc(n, fs)
		return a
	}

	// x = batch.cuda(); the previous step's x dies as its name is rebound,
	// unless a kept graph saved it.
	x := m(rows*h*f32, st.input)
	if c.Loop != KeepGraph {
		g.free(*prevX, st.input)
		*prevX = x
	}
	var y traces.Addr
	if c.Loop != KeepGraph {
		y = m(rows*8, st.target)
		g.free(*prevY, st.target)
		*prevY = y
	}

	// out = model(x): each hidden layer's Linear output is read by its
	// ReLU and dropped; the ReLU's output is saved (by ReLU and by the
	// next Linear) for backward.
	var saved []traces.Addr
	for l := 0; l < c.Layers; l++ {
		lin := m(rows*h*f32, st.linear)
		act := m(rows*h*f32, st.relu)
		g.free(lin, st.relu)
		saved = append(saved, act)
	}
	logits := m(rows*v*f32, st.head)
	if err != nil {
		return err
	}
	if c.Loop == KeepGraph {
		// outputs.append(out): the output keeps its graph, and the graph
		// x and every saved activation.
		return nil
	}

	// loss = F.cross_entropy(out, y): log_softmax's output is saved, the
	// logits are not.
	ls := m(rows*v*f32, st.logSoftmax)
	loss := m(f32, st.loss)
	if err != nil {
		return err
	}
	g.free(logits, st.loss)
	if c.Loop == Train {
		g.free(*prevLoss, st.loss)
		*prevLoss = loss
	} // KeepLoss: losses.append(loss), never freed

	// loss.backward(): gradients flow back through the head and each
	// layer; every saved tensor is freed as its node runs.
	var grads []traces.Addr
	one := m(f32, st.backward)
	gOut := m(rows*v*f32, st.backward)
	g.free(ls, st.backward)
	g.free(one, st.backward)
	grads = append(grads, m(v*h*f32, st.backward), m(v*f32, st.backward))
	gIn := m(rows*h*f32, st.backward)
	g.free(gOut, st.backward)
	for l := c.Layers - 1; l >= 0; l-- {
		gAct := m(rows*h*f32, st.backward)
		g.free(saved[l], st.backward)
		g.free(gIn, st.backward)
		grads = append(grads, m(h*h*f32, st.backward), m(h*f32, st.backward))
		gIn = 0
		if l > 0 {
			gIn = m(rows*h*f32, st.backward)
		}
		g.free(gAct, st.backward)
	}
	if err != nil {
		return err
	}

	// opt.step(): AdamW makes exp_avg and exp_avg_sq for each parameter
	// at its first step and keeps them; each step's foreach temporaries
	// die with it.
	g.annotate("START", "Optimizer.step#AdamW.step")
	if step == 0 || len(*state) == 0 {
		for _, n := range params {
			*state = append(*state, m(n, st.state), m(n, st.state))
		}
	}
	var tmp []traces.Addr
	for _, n := range params {
		tmp = append(tmp, m(n, st.adamw))
	}
	for _, a := range tmp {
		g.free(a, st.adamw)
	}
	if err != nil {
		return err
	}
	g.annotate("END", "Optimizer.step#AdamW.step")

	// opt.zero_grad(): set_to_none frees every gradient.
	g.annotate("START", "Optimizer.zero_grad#AdamW.zero_grad")
	for _, a := range grads {
		g.free(a, st.zero)
	}
	g.annotate("END", "Optimizer.zero_grad#AdamW.zero_grad")
	return nil
}
