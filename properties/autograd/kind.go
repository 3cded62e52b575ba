package autograd

import "fmt"

// Kind is a kind of step of an in-process program (see Step): an
// operation of the language with the way the step makes it. The 37 kinds
// are numbered in the order of Kinds, the order saved programs' bytes name
// them in (see DecodeSteps): a kind is added at the end.
type Kind struct {
	Name string // as a program's listing writes it: "ckpt-mul", "mul_-nograd"
	Op   Op
	Mod  Mod
}

// Mod says how a step makes its operation.
type Mod uint8

const (
	// NoGrad: under the engine's NoGrad (PyTorch's torch.no_grad()).
	NoGrad Mod = 1 << iota
	// Checkpointed: under the engine's Checkpoint, its saved tensors
	// checkpointed.
	Checkpointed
	// RetainGraph: backward(retain_graph=True).
	RetainGraph
	// ByTensor: an in-place op by the tensor B; with Alpha, B scaled by the
	// step's constant (PyTorch's add_(b, alpha=f)).
	ByTensor
	// Alpha: see ByTensor.
	Alpha
	// ByScalar: an in-place op by the step's constant.
	ByScalar
	// Column: a reshape to a column (numel, 1), so that operands
	// broadcast; a plain reshape flattens.
	Column
)

// Kinds are the in-process step kinds, in the order bytes name them.
var Kinds = []Kind{
	{"leaf", Leaf, 0},
	{"add", Add, 0}, {"mul", Mul, 0}, {"div", Div, 0}, {"sub", Sub, 0},
	{"exp", Exp, 0}, {"tanh", Tanh, 0}, {"relu", Relu, 0}, {"pow", Pow, 0}, {"neg", Neg, 0}, {"log", Log, 0}, {"sum", Sum, 0},
	{"reshape", Reshape, 0}, {"slice", Slice, 0}, {"detach", Detach, 0}, {"data", Data, 0},
	{"add_", AddInPlace, ByTensor | Alpha}, {"mul_", MulInPlace, ByScalar}, {"zero_", Zero, 0},
	{"backward", Backward, 0}, {"backward-retain", Backward, RetainGraph},
	{"zero_grad", ZeroGrad, 0}, {"clear_grads", ClearGrads, 0}, {"scope_enter", ScopeEnter, 0}, {"scope_exit", ScopeExit, 0},
	// free_graph lets go of a tensor: Tensor.Drop (Python's del) under
	// PyTorch's lifetime, Engine.FreeGraph under TensorLogic's.
	{"free_graph", Drop, 0},
	// Checkpoints: ops whose saved tensors are checkpointed, and an
	// in-place op under NoGrad, which takes no snapshot.
	{"ckpt-mul", Mul, Checkpointed}, {"ckpt-exp", Exp, Checkpointed}, {"ckpt-pow", Pow, Checkpointed},
	{"mul_-nograd", MulInPlace, ByScalar | NoGrad},
	// In-place ops by a tensor and by a number, a view made under NoGrad,
	// a reshape to a column (so that operands broadcast), retain_grad.
	{"sub_", SubInPlace, ByTensor | Alpha}, {"div_", DivInPlace, ByTensor}, {"mul_t", MulInPlace, ByTensor},
	{"add_n", AddInPlace, ByScalar}, {"slice-nograd", Slice, NoGrad}, {"reshape-col", Reshape, Column},
	{"retain_grad", RetainGrad, 0},
}

// KindOf returns the number of the kind named name, and whether there is one.
func KindOf(name string) (int, bool) {
	for i, k := range Kinds {
		if k.Name == name {
			return i, true
		}
	}
	return 0, false
}

// kind is KindOf for names this package writes: it panics on a name
// that is none, a bug of the package caught by its tests.
func kind(name string) int {
	i, ok := KindOf(name)
	if !ok {
		panic(fmt.Sprintf("autograd: no step kind %q", name))
	}
	return i
}
