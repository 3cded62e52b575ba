package autograd

// An episode is a short run of steps over the tensors just made, with a
// few slots drawn from its parameters: the sequences a bug of version
// bookkeeping needs, which steps drawn one by one over the whole pool
// almost never line up. The checkpoint episode is issue 17's sequence
// (a leaf, exp, a NoGrad in-place op on the result, a product with
// another leaf, its sum, backward twice with retain_graph) and its
// siblings: another op making the saved tensor (pow saves its input, a
// plain exp is not checkpointed outside a checkpointed program), another
// write (tracked or not, add_, mul_, zero_), another consumer saving the
// written tensor at its new version (or saving nothing), and another end (a write between
// the two backwards, the second without retain_graph). Every generator
// of autograd programs (GenerateAutograd, the rapid and gopter
// properties, FuzzAutogradProgram's bytes) draws episodes among steps,
// and an episode is only steps, so shrinking drops its steps freely. The
// view episode is issue 20's views written in place, the lifetime
// episode its graph lifetime (see lifetimeEpisode).

// Episodes is how many kinds of episode there are: an episode's kind
// is its first parameter modulo this.
const Episodes = 3

// Episode returns the steps of an episode whose kind and slots the
// parameters p, q and r choose (any ints ≥ 0), with constant f.
func Episode(p, q, r int, f float64) []Step {
	switch p % Episodes {
	case 1:
		return viewEpisode(p/Episodes, q, r, f)
	case 2:
		return lifetimeEpisode(p/Episodes, q, r, f)
	}
	return checkpointEpisode(p/Episodes, q, r, f)
}

// episodeStep makes a step of the kind named name with operands a and b.
func episodeStep(name string, a, b int, f float64) Step {
	return Step{Kind: kind(name), A: a, B: b, F: f}
}

// checkpointEpisode is issue 17's sequence and its siblings.
func checkpointEpisode(p, q, r int, f float64) []Step {
	step := func(name string, a, b int) Step { return episodeStep(name, a, b, f) }
	maker := []string{"ckpt-exp", "ckpt-exp", "ckpt-pow", "exp"}[p%4]
	write := []string{"mul_-nograd", "mul_-nograd", "add_", "mul_", "zero_"}[q%5]
	consumer := []string{"mul", "ckpt-mul", "div", "pow", "add"}[q/5%5]
	// h is the tensor the maker makes, its operand a new leaf that
	// requires grad (an even A); the consumer takes h and another leaf.
	steps := []Step{
		step("leaf", 0, 0),
		step(maker, Newest(0), 0),
		step(write, Newest(0), Newest(1)), // add_ adds the leaf
		step("leaf", 2, 0),
		step(consumer, Newest(1), Newest(0)),
		step("backward-retain", Newest(0), 0), // of the product's sum, a new tensor
	}
	// After the first backward: h is the 3rd newest (h, leaf, product,
	// sum), the sum the newest.
	switch r % 4 {
	case 0: // issue 17's: a second backward through the saved tensors
		steps = append(steps, step("backward-retain", Newest(0), 0))
	case 1:
		steps = append(steps, step("backward", Newest(0), 0))
	case 2: // a write after the recompute, then backward
		steps = append(steps, step(write, Newest(3), Newest(2)), step("backward-retain", Newest(0), 0))
	case 3: // a NoGrad write after the recompute, then backward
		steps = append(steps, step("mul_-nograd", Newest(3), 0), step("backward", Newest(0), 0))
	}
	return steps
}

// viewEpisode writes through a view, or its base, in place, then reads
// through the other: issue 20's sequences, where the view's grad_fn is
// made anew (h = w*k, v = h[0:1], h.mul_(3), v.sum().backward()), the
// base is rebased by CopySlices (v.mul_(3), h.sum().backward()), a
// saved view or base is named in the modified message, and a view made
// under NoGrad refuses a recorded write. After it: h is the 2nd newest
// (h, v) and the write's operand the 3rd (k).
func viewEpisode(p, q, r int, f float64) []Step {
	step := func(name string, a, b int) Step { return episodeStep(name, a, b, f) }
	view := []string{"slice", "slice", "reshape", "slice-nograd"}[p%4]
	write := []string{"mul_", "mul_t", "add_", "sub_", "div_", "add_n", "mul_-nograd", "zero_"}[q%8]
	target := []int{Newest(0), Newest(1)}[q/8%2]                         // the view or the base
	reader := []string{"backward", "backward-retain", "exp", "mul"}[r%4] // what reads the other
	steps := []Step{
		step("leaf", 0, 0),
		step("leaf", 2, 0),
		step("mul", Newest(0), Newest(1)), // h, a non-leaf
		step(view, Newest(0), 0),          // v
	}
	source := Newest(1 - q/8%2) // the other of the two
	switch reader {
	case "exp", "mul": // saved before the write, unpacked after it
		steps = append(steps, step(reader, source, Newest(2)), step(write, target+1, Newest(4)), step("backward", Newest(0), 0))
	default:
		steps = append(steps, step(write, target, Newest(2)), step(reader, source, 0))
		if r/4%2 == 1 {
			steps = append(steps, step("backward", Newest(0), 0))
		}
	}
	return steps
}

// lifetimeEpisode is issue 20's graph lifetime: a loss over an
// intermediate h (of a leaf w), k (of a leaf u, made before h) and a leaf
// v, let go of in part (the loss detached to be logged, h or the loss
// dropped, or under TensorLogic's lifetime their graphs freed),
// backpropagated (with retain_graph or not, or after an in-place write to
// h, which under PyTorch's lifetime refuses the backward once v has its
// gradient and while k's node still waits for its own), h read
// afterwards, and maybe a second backward. Where the lifetimes differ,
// one refuses what the other runs; the model and the Held oracle judge
// both.
func lifetimeEpisode(p, q, r int, f float64) []Step {
	step := func(name string, a, b int) Step { return episodeStep(name, a, b, f) }
	maker := []string{"exp", "tanh", "pow", "mul"}[p%4] // exp and tanh save h, pow and mul w
	steps := []Step{
		step("leaf", 0, 0),                // w, requiring grad
		step("leaf", 2, 0),                // u, requiring grad
		step("pow", Newest(0), 0),         // k = u**2
		step(maker, Newest(2), Newest(2)), // h
		step("leaf", 4, 0),                // v, requiring grad
		step("add", Newest(1), Newest(2)), // h + k
		step("add", Newest(0), Newest(1)), // (h + k) + v
		step("sum", Newest(0), 0),         // loss
	}
	// Counted from the newest: loss 0, h 4.
	h, loss := 4, 0
	switch q % 4 {
	case 0: // logged: a detached alias of the loss is the newest
		steps = append(steps, step("detach", Newest(loss), 0))
		h, loss = h+1, loss+1
	case 1:
		steps = append(steps, step("free_graph", Newest(h), 0))
	case 2:
		steps = append(steps, step("free_graph", Newest(loss), 0))
	}
	switch r % 3 {
	case 0:
		steps = append(steps, step("backward", Newest(loss), 0))
	case 1:
		steps = append(steps, step("backward-retain", Newest(loss), 0))
	case 2:
		steps = append(steps, step("mul_", Newest(h), 0), step("backward", Newest(loss), 0))
	}
	steps = append(steps, step("exp", Newest(h), 0)) // h read after backward: one tensor more
	if q/4%2 == 1 {
		steps = append(steps, step("backward", Newest(loss+1), 0))
	}
	return steps
}
