package autograd

import (
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// JudgeRefusal holds a runtime's answer to a call to the model's verdicts
// at the call's events: refused says whether the runtime refused the call,
// kinds the kinds it named (a refusal naming none is none of the model's
// business), reported the kinds the model reports at the call's events, in
// order. The judgement is the same in process and over the pipe:
//
//   - unreported is the first kind the runtime refused with that the model
//     does not report ("" for none): a refusal the model does not back;
//   - unexplained is the index in reported of the first kind the answer
//     does not name (-1 for none): the model finds misuse the runtime let
//     pass, or that it refused as something else.
//
// A caller that lets the model report more than the runtime names (layer
// 2's, whose other verdicts the program may explain) reads unreported
// alone.
func JudgeRefusal(refused bool, kinds, reported []traces.Kind) (unreported traces.Kind, unexplained int) {
	var want []traces.Kind
	if refused {
		want = kinds
	}
	unexplained = slices.IndexFunc(reported, func(k traces.Kind) bool { return !slices.Contains(want, k) })
	for _, k := range want {
		if !slices.Contains(reported, k) {
			return k, unexplained
		}
	}
	return "", unexplained
}
