package autograd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// The tests of this file hold the two lifetimes to what each promises:
// PyTorch's to what PyTorch 1.13 did, program by program (recorded once,
// in each case's comment; they run without PyTorch), TensorLogic's to
// its hybrid cleanup where the two differ.

// transcript is what a program showed: values read, grads, refusals and
// the saved tensors released, one line each, so that a case states its
// expected outcome as PyTorch printed it.
type transcript struct {
	lines []string
}

func (tr *transcript) add(format string, args ...any) {
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

// vals shows t's values, or why they cannot be read.
func (tr *transcript) vals(name string, t *Tensor) {
	v, err := t.Values()
	if err != nil {
		tr.add("%s: %s", name, err.(*Error).Msg)
		return
	}
	tr.add("%s %v", name, v)
}

// grad shows t's grad, "None" for none.
func (tr *transcript) grad(name string, t *Tensor) {
	if t.Grad() == nil {
		tr.add("%s.grad None", name)
		return
	}
	tr.vals(name+".grad", t.Grad())
}

// err shows a call's outcome: nothing for success, PyTorch's message for
// a refusal.
func (tr *transcript) err(call string, err error) {
	if err == nil {
		return
	}
	if ae, ok := err.(*Error); ok {
		tr.add("%s: %s", call, ae.Msg)
		return
	}
	tr.add("%s: %v", call, err)
}

func (tr *transcript) String() string { return strings.Join(tr.lines, "\n") }

// lifetimeEnv is an engine with lifetime lt over a runtime, one scope
// open, whose unsave events go into tr ("released s1"), as the hooks of
// the recorded PyTorch programs printed them.
func lifetimeEnv(t *testing.T, lt Lifetime, tr *transcript, faults ...impl.Fault) *Engine {
	t.Helper()
	rec := func(ev traces.Event) {
		if ev.Op == traces.OpUnsave {
			tr.add("released %s", ev.Name)
		}
	}
	e, err := New(impl.New(impl.Config{Faults: faults}), Config{Lifetime: lt, Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ScopeEnter(); err != nil {
		t.Fatal(err)
	}
	return e
}

// msgModified is PyTorch's message for a saved tensor of shape [2],
// output 0 of fn, found at version 1.
func msgModified(fn string) string {
	return modifiedMsg([]int{2}, fn, 0, 1, 0)
}

// msgFreed is TensorLogic's refusal of a tensor its cleanup freed.
const msgFreed = "the tensor was freed (its scope exited, or its graph was freed by backward, detach or FreeGraph)"

// TestLifetimes runs each program under both lifetimes. Under PyTorch's
// the transcript is what PyTorch 1.13 printed for the program in the
// comment; under TensorLogic's it is where hybrid cleanup differs (issue
// 20's "graph lifetime"), or the same.
func TestLifetimes(t *testing.T) {
	cases := []struct {
		name string
		// run runs the program and returns the graph's root, which
		// TensorLogic's lifetime frees after the transcript (FreeGraph)
		run  func(t *testing.T, e *Engine, tr *transcript) *Tensor
		want map[Lifetime]string
	}{
		{
			// w = torch.tensor([1., 2], requires_grad=True)
			// loss = (w * w).sum(); d = loss.detach()
			// print(d.item()); loss.backward(); print(w.grad)
			// 5.0
			// tensor([2., 4.])
			name: "detach then backward",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2)
				loss := m(m(w.Mul(w)).Sum())
				d := m(loss.Detach())
				tr.vals("d", d)
				tr.err("loss.backward()", loss.Backward(false))
				tr.grad("w", w)
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch:     "d [5]\nreleased s1\nreleased s2\nw.grad [2 4]",
				LifetimeTensorLogic: "released s1\nreleased s2\nd [5]\nloss.backward(): " + msgFreed + "\nw.grad None",
			},
		},
		{
			// w = torch.tensor([1., 2], requires_grad=True)
			// h = w.exp(); loss = (h * 3).sum(); loss.backward()
			// print(h.tolist(), h.grad_fn.name(), w.grad.tolist())
			// [2.718281828459045, 7.38905609893065] ExpBackward0 [8.154845485377136, 22.16716829679195]
			name: "an intermediate read after backward",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2)
				h := m(w.Exp())
				loss := m(m(h.Mul(m(e.Scalar(3)))).Sum())
				tr.err("loss.backward()", loss.Backward(false))
				tr.vals("h", h)
				tr.add("h.grad_fn %s", h.GradFn())
				tr.grad("w", w)
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch:     "released s2\nreleased s1\nh [2.718281828459045 7.38905609893065]\nh.grad_fn ExpBackward0\nw.grad [8.154845485377136 22.16716829679195]",
				LifetimeTensorLogic: "released s2\nreleased s1\nh: " + msgFreed + "\nh.grad_fn ExpBackward0\nw.grad [8.154845485377136 22.16716829679195]",
			},
		},
		{
			// w = torch.tensor([1., 2], requires_grad=True); u = torch.tensor([0.5, 1], requires_grad=True)
			// h = u.exp(); h2 = h * 1; h.mul_(2); a = w * 2; loss = (h2 + a).sum()
			// loss.backward()   # RuntimeError: ... [torch.DoubleTensor [2]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead. ...
			// print(w.grad, u.grad)   # tensor([2., 2.]) None
			// loss.backward()   # RuntimeError: Trying to backward through the graph a second time ...
			// print(w.grad, u.grad)   # tensor([2., 2.]) None
			// (h.grad_fn's saved result is still there: reading it raises the
			// modified message, not the freed one; h2's MulBackward0 raises
			// the freed one.)
			name: "a refused backward's partial accumulation",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2)
				u := leaf(t, e, true, 0.5, 1)
				h := m(u.Exp())                      // saves s1 (its output)
				h2 := m(h.Mul(m(e.Scalar(1))))       // saves s2 (the 1)
				tr.err("h.mul_(2)", h.MulInPlace(2)) // saves s3 (the 2)
				a := m(w.Mul(m(e.Scalar(2))))        // saves s4 (the 2)
				loss := m(m(h2.Add(a)).Sum())
				tr.err("loss.backward()", loss.Backward(false))
				tr.grad("w", w)
				tr.grad("u", u)
				tr.err("loss.backward()", loss.Backward(false))
				tr.grad("w", w)
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch: "released s4\nreleased s2\nloss.backward(): " + msgModified("ExpBackward0") +
					"\nw.grad [2 2]\nu.grad None\nloss.backward(): " + MsgSecondBackward + "\nw.grad [2 2]",
				LifetimeTensorLogic: "loss.backward(): " + msgModified("ExpBackward0") +
					"\nw.grad None\nu.grad None\nloss.backward(): " + msgModified("ExpBackward0") + "\nw.grad None",
			},
		},
		{
			// The same with retain_graph=True: each refusal leaves w.grad
			// one more [2, 2].
			// loss.backward(retain_graph=True)   # RuntimeError: ... modified ...
			// print(w.grad)                      # tensor([2., 2.])
			// loss.backward(retain_graph=True)   # RuntimeError: ... modified ...
			// print(w.grad)                      # tensor([4., 4.])
			name: "a refused backward with retain_graph accumulates again",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2)
				u := leaf(t, e, true, 0.5, 1)
				h := m(u.Exp())
				h2 := m(h.Mul(m(e.Scalar(1))))
				tr.err("h.mul_(2)", h.MulInPlace(2))
				a := m(w.Mul(m(e.Scalar(2))))
				loss := m(m(h2.Add(a)).Sum())
				tr.err("loss.backward(retain_graph=True)", loss.Backward(true))
				tr.grad("w", w)
				tr.err("loss.backward(retain_graph=True)", loss.Backward(true))
				tr.grad("w", w)
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch: "loss.backward(retain_graph=True): " + msgModified("ExpBackward0") + "\nw.grad [2 2]\n" +
					"loss.backward(retain_graph=True): " + msgModified("ExpBackward0") + "\nw.grad [4 4]",
				LifetimeTensorLogic: "loss.backward(retain_graph=True): " + msgModified("ExpBackward0") + "\nw.grad None\n" +
					"loss.backward(retain_graph=True): " + msgModified("ExpBackward0") + "\nw.grad None",
			},
		},
		{
			// A leaf one of whose nodes had not run when backward was
			// refused accumulates nothing:
			// w = torch.tensor([1., 2], requires_grad=True)
			// h = w.exp(); h2 = h * 1; h.mul_(2); a = w * w; loss = (h2 + a).sum()
			// loss.backward()   # RuntimeError: ... modified ...
			// print(w.grad)     # None
			name: "a refused backward leaves a leaf whose nodes did not all run",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2)
				h := m(w.Exp())
				h2 := m(h.Mul(m(e.Scalar(1))))
				tr.err("h.mul_(2)", h.MulInPlace(2))
				a := m(w.Mul(w))
				loss := m(m(h2.Add(a)).Sum())
				tr.err("loss.backward()", loss.Backward(false))
				tr.grad("w", w)
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch:     "released s4\nreleased s5\nreleased s2\nloss.backward(): " + msgModified("ExpBackward0") + "\nw.grad None",
				LifetimeTensorLogic: "loss.backward(): " + msgModified("ExpBackward0") + "\nw.grad None",
			},
		},
		{
			// retain_grad's hook runs before its node, which then fails:
			// u = torch.tensor([0.5, 1], requires_grad=True)
			// h = u.exp(); k = h * h; k.retain_grad(); h.mul_(2); loss = k.sum()
			// loss.backward()   # RuntimeError: ... [torch.DoubleTensor [2]], which is output 0 of MulBackward0, is at version 1; expected version 0 instead. ...
			// print(k.grad)     # tensor([1., 1.])
			name: "retain_grad of a node a refused backward stopped at",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				u := leaf(t, e, true, 0.5, 1)
				h := m(u.Exp())
				k := m(h.Mul(h))
				k.RetainGrad()
				tr.err("h.mul_(2)", h.MulInPlace(2))
				loss := m(k.Sum())
				tr.err("loss.backward()", loss.Backward(false))
				tr.grad("k", k)
				tr.grad("u", u)
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch:     "loss.backward(): " + msgModified("MulBackward0") + "\nk.grad [1 1]\nu.grad None",
				LifetimeTensorLogic: "loss.backward(): " + msgModified("MulBackward0") + "\nk.grad None\nu.grad None",
			},
		},
		{
			// w = torch.tensor([1., 2], requires_grad=True)
			// h = w * 3; h.retain_grad(); loss = (h * h).sum(); loss.backward()
			// print(h.grad)   # tensor([ 6., 12.])
			name: "retain_grad across backward",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2)
				h := m(w.Mul(m(e.Scalar(3))))
				h.RetainGrad()
				loss := m(m(h.Mul(h)).Sum())
				tr.err("loss.backward()", loss.Backward(false))
				tr.grad("h", h)
				tr.grad("w", w)
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch:     "released s2\nreleased s3\nreleased s1\nh.grad [6 12]\nw.grad [18 36]",
				LifetimeTensorLogic: "released s2\nreleased s3\nreleased s1\nh.grad [6 12]\nw.grad [18 36]",
			},
		},
		{
			// with saved_tensors_hooks(pack, unpack):   # pack boxes each saved tensor, printing "released sN" when the box dies
			//     w = torch.tensor([1., 2], requires_grad=True); x = torch.tensor([3., 4])
			//     p = w * x; q = p.pow(2); loss = q.sum()
			// del loss   # (nothing)
			// del q      # released s2
			// del x      # (nothing)
			// del p      # released s1
			// Under TensorLogic's lifetime FreeGraph(loss) is the way.
			name: "a graph dropped without backward frees everything",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2)
				x := leaf(t, e, false, 3, 4)
				p := m(w.Mul(x)) // saves x: s1
				q := m(p.Pow(2)) // saves p: s2
				loss := m(q.Sum())
				if e.life.kind() != LifetimePyTorch {
					tr.err("FreeGraph(loss)", e.FreeGraph(loss))
					tr.vals("p", p)
					return nil
				}
				for _, d := range []struct {
					name string
					t    *Tensor
				}{{"loss", loss}, {"q", q}, {"x", x}, {"p", p}} {
					tr.add("del %s", d.name)
					tr.err("del "+d.name, d.t.Drop())
				}
				tr.vals("p", p)
				tr.add("live objects %d", len(e.Runtime().State().Objects))
				return nil
			},
			want: map[Lifetime]string{
				LifetimePyTorch:     "del loss\ndel q\nreleased s2\ndel x\ndel p\nreleased s1\np: the tensor was dropped\nlive objects 1",
				LifetimeTensorLogic: "released s2\nreleased s1\np: " + msgFreed,
			},
		},
		{
			// A view keeps its base, and the base's graph, alive:
			// w = torch.tensor([1., 2, 3], requires_grad=True)
			// h = w * 2; v = h[0:2]; del h
			// v.sum().backward(); print(w.grad)   # tensor([2., 2., 0.])
			// print(v._base.grad_fn)              # <MulBackward0 ...>
			name: "a view keeps its dropped base",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2, 3)
				h := m(w.Mul(m(e.Scalar(2))))
				v := m(h.Slice(0, 2))
				tr.err("del h", h.Drop())
				tr.add("h alive for v %t", !h.dead)
				loss := m(v.Sum())
				tr.err("loss.backward()", loss.Backward(false))
				tr.grad("w", w)
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch:     "h alive for v true\nreleased s1\nw.grad [2 2 0]",
				LifetimeTensorLogic: "del h: Drop is PyTorch's lifetime (Config.Lifetime); TensorLogic's frees a tensor at its scope's exit, or with its graph (backward, Detach, FreeGraph)\nh alive for v true\nreleased s1\nw.grad [2 2 0]",
			},
		},
		{
			// w = torch.tensor([1., 2], requires_grad=True)
			// loss = w.exp().sum(); loss.backward(); loss.backward()
			// RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). ...
			name: "backward twice through a freed graph",
			run: func(t *testing.T, e *Engine, tr *transcript) *Tensor {
				m := must[*Tensor](t)
				w := leaf(t, e, true, 1, 2)
				loss := m(m(w.Exp()).Sum())
				tr.err("loss.backward()", loss.Backward(false))
				tr.err("loss.backward()", loss.Backward(false))
				return loss
			},
			want: map[Lifetime]string{
				LifetimePyTorch:     "released s1\nloss.backward(): " + MsgSecondBackward,
				LifetimeTensorLogic: "released s1\nloss.backward(): " + MsgSecondBackward,
			},
		},
	}
	for _, c := range cases {
		for _, lt := range []Lifetime{LifetimeTensorLogic, LifetimePyTorch} {
			t.Run(c.name+"/"+lt.String(), func(t *testing.T) {
				tr := &transcript{}
				e := lifetimeEnv(t, lt, tr)
				root := c.run(t, e, tr)
				if got := tr.String(); got != c.want[lt] {
					t.Errorf("transcript:\n%s\nwant:\n%s", got, c.want[lt])
				}
				var err error
				if root != nil && lt == LifetimeTensorLogic {
					err = e.FreeGraph(root)
				}
				if err := first(err, e.ScopeExit(), e.End()); err != nil {
					t.Errorf("teardown: %v", err)
				}
				if n := len(e.Runtime().State().Objects); n != 0 {
					t.Errorf("%d objects alive at end, want none", n)
				}
			})
		}
	}
}

// TestLifetimeConfig: New takes the two lifetimes and refuses another,
// naming it.
func TestLifetimeConfig(t *testing.T) {
	for _, c := range []struct {
		lt      Lifetime
		name    string
		refused bool
	}{
		{LifetimeTensorLogic, "tensorlogic", false},
		{LifetimePyTorch, "pytorch", false},
		{Lifetime(7), "Lifetime(7)", true},
	} {
		if got := c.lt.String(); got != c.name {
			t.Errorf("Lifetime(%d).String() = %q, want %q", int(c.lt), got, c.name)
		}
		_, err := New(impl.New(impl.Config{}), Config{Lifetime: c.lt})
		if refused := err != nil; refused != c.refused || refused && !strings.Contains(err.Error(), c.name) {
			t.Errorf("New with lifetime %v: %v, want refused %t naming it", c.lt, err, c.refused)
		}
	}
}

// TestUnderPyTorchLifetime runs the tests written against env and
// ckptEnv again under PyTorch's lifetime: values, gradients, versions,
// refusals and their words, checkpoints are the same under both; only
// when buffers die differs (the tests of TensorLogic's cleanup itself,
// TestViewMadeAnewFreesOldGraph and TestLifetimes' own, are not here).
func TestUnderPyTorchLifetime(t *testing.T) {
	testLifetime = LifetimePyTorch
	defer func() { testLifetime = LifetimeTensorLogic }()
	for _, c := range []struct {
		name string
		test func(*testing.T)
	}{
		{"Refusals", TestRefusals},
		{"Allowed", TestAllowed},
		{"Versions", TestVersions},
		{"FaultsFromRuntime", TestFaultsFromRuntime},
		{"PyTorchViewAfterBaseInPlace", TestPyTorchViewAfterBaseInPlace},
		{"PyTorchSavedViewNamed", TestPyTorchSavedViewNamed},
		{"PyTorchRefusals", TestPyTorchRefusals},
		{"PyTorchAllowed", TestPyTorchAllowed},
		{"PyTorchOrder", TestPyTorchOrder},
		{"PyTorchDivGradRounding", TestPyTorchDivGradRounding},
		{"PyTorchSumRounding", TestPyTorchSumRounding},
		{"CheckpointRestore", TestCheckpointRestore},
		{"CheckpointRecompute", TestCheckpointRecompute},
		{"CheckpointStaleSnapshot", TestCheckpointStaleSnapshot},
		{"CheckpointRestoreWrongVersion", TestCheckpointRestoreWrongVersion},
		{"CheckpointRefusals", TestCheckpointRefusals},
		{"CheckpointRecomputeHoldsSavedVersion", TestCheckpointRecomputeHoldsSavedVersion},
		{"CheckpointVersionAfterRecompute", TestCheckpointVersionAfterRecompute},
	} {
		t.Run(c.name, c.test)
	}
}
