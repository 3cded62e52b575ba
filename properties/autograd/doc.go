// Package autograd is the autograd language: the programs that check an
// autograd engine's memory management, in process against the Go engine
// of package impl/autograd (package properties runs them) and over the
// tlcheck-drive protocol's layer 5 against any engine with a driver
// (package drive sends them: PyTorch's, TensorFlow.js's, the Go engine's
// impldriver). It holds what both share, written once: the vocabulary,
// the generators, the shrinkers and the refusal judge. It imports no
// runtime (no impl/ package), so that a library driving another runtime
// links none.
//
// The vocabulary is one table (op.go), one row per operation: its name
// (PyTorch's), the fields a call of it carries on the wire (PROTOCOL.md and
// protocol.schema.json list the same) and where it runs. Most run both in
// process and on the wire; matmul and end only on the wire (the in-process
// programs draw neither; their run ends by itself); clear_grads and the
// scopes only in process (the protocol has no call for them). A program
// on the wire is a list of Calls over tensors named by handle; an
// in-process program is a list of Steps over a pool of tensors named by
// index, each of a Kind: an operation with the way the step makes it
// (under no_grad, checkpointed, by a tensor or by a number, ...), 37 of
// them, numbered in the order saved fuzz inputs name them.
//
// The API:
//
//	Op, Row, Rows, Lookup, Ops     the vocabulary; Field: the wire's fields
//	Call                           a layer-5 call, by handle
//	Generate                       a random layer-5 program, following shapes
//	Shrink, Without, SameCall      a failing layer-5 program made small
//	Kind, Kinds, KindOf, Mod       the in-process step kinds
//	Step, Newest, PoolIndex        an in-process step, its operands
//	GenerateSteps, DrawStep,       a random in-process program: steps and
//	  DrawEpisode, Episode           episodes (the sequences bugs need)
//	DecodeSteps                    any bytes as an in-process program (fuzzing)
//	ShrinkSteps, CheckpointPrelude a failing in-process program made small
//	JudgeRefusal                   a refusal held to the model's verdicts
//
// The two drawings differ where the two runs differ: on the wire, tensors
// of many shapes (broadcasting, matmul, views of rows) under handles fixed
// before the run; in process, small tensors under pool indices that any
// byte string decodes to, with episodes. Each keeps its stream: the same
// seed draws the same program it drew before, and saved inputs decode as
// they did. The shape rules both follow are package internal/shape's,
// which the engine of impl/autograd follows too.
package autograd
