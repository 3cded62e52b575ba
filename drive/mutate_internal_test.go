package drive

import (
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestMutatedTensorKinds: the kinds of PyTorch's refusals in the session
// (autograd_internal_test.go), each changed, added to, dropped, or the
// refusal made a call done: every one is a failure at that call. (The Go
// engine's answers, mutate_test.go's, name no kinds.) The same for the
// refusals of layers 2 and 3: releasedTwice's.
func TestMutatedTensorKinds(t *testing.T) {
	type kindMutation struct {
		name  string
		apply func(a *Answer) bool
	}
	var ms []kindMutation
	for _, k := range traces.Kinds() {
		ms = append(ms,
			kindMutation{"changed to " + string(k), func(a *Answer) bool {
				if slices.Contains(a.Kinds, k) {
					return false
				}
				a.Kinds = []traces.Kind{k}
				return true
			}},
			kindMutation{string(k) + " added", func(a *Answer) bool {
				if slices.Contains(a.Kinds, k) {
					return false
				}
				a.Kinds = append(slices.Clone(a.Kinds), k)
				return true
			}})
	}
	ms = append(ms,
		kindMutation{"the kinds dropped", func(a *Answer) bool { a.Kinds = nil; return true }},
		kindMutation{"made done", func(a *Answer) bool { a.Refused, a.Message, a.Kinds = false, "", nil; return true }})
	mutate := func(line string, m kindMutation) (string, bool) {
		a, err := ParseAnswer([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if !m.apply(&a) {
			return "", false
		}
		return string(a.AppendJSON(nil)), true
	}
	tried := 0
	for i, s := range session {
		if a, _ := ParseAnswer([]byte(s.answer)); len(a.Kinds) == 0 {
			continue
		}
		for _, m := range ms {
			line, ok := mutate(s.answer, m)
			if !ok {
				continue
			}
			tried++
			res := checkSession(t, -1, map[int]string{i: line})
			if f := res.Failure; f == nil || f.Call != i {
				t.Errorf("layer 5, call %d's kinds %s: failure %v, want one at call %d\n%s\n%s", i, m.name, f, i, line, res.Listing())
			}
		}
	}
	for i, line := range releasedTwice.answers {
		if a, _ := ParseAnswer([]byte(line)); len(a.Kinds) == 0 {
			continue
		}
		for _, m := range ms {
			mutated, ok := mutate(line, m)
			if !ok || m.name == "the kinds dropped" { // optional in layers 2 and 3
				continue
			}
			tried++
			answers := slices.Clone(releasedTwice.answers)
			answers[i] = mutated
			res := checkAnswers(t, releasedTwice.calls, answers)
			if f := res.Failure; f == nil || f.Call != i {
				t.Errorf("layer 2, call %d's kinds %s: failure %v, want one at call %d\n%s", i, m.name, f, i, res.Listing())
			}
		}
	}
	if tried < 40 {
		t.Errorf("%d mutations tried", tried)
	}
}
