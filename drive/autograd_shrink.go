package drive

import "github.com/tlcheck/tlcheck/properties/autograd"

// shrinkTensorCalls shrinks calls (which end with end) while fails holds:
// the autograd language's one shrinker (autograd.Shrink) over drive's
// calls.
func shrinkTensorCalls(calls []TensorCall, fails func([]TensorCall) bool) []TensorCall {
	return tensorCalls(autograd.Shrink(agCalls(calls), func(c []autograd.Call) bool { return fails(tensorCalls(c)) }))
}

// withoutCalls is autograd.Without over drive's calls.
func withoutCalls(calls []TensorCall, i, j int) []TensorCall {
	return tensorCalls(autograd.Without(agCalls(calls), i, j))
}

// sameCall is autograd.SameCall over drive's calls.
func sameCall(a, b TensorCall) bool { return autograd.SameCall(autograd.Call(a), autograd.Call(b)) }
