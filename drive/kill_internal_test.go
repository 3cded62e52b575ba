package drive

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/traces"
)

// The tests of this file and kill_test.go pin behaviours that a planted
// bug once got past every test of `go test -short ./drive/...` with
// (issue 29, items 1 to 8): each fails on the wrong code. The classes
// behind them are in mutate_test.go (answers mutated from correct ones)
// and bounds_test.go (every bound at, below and above its value).

// checkAnswers runs answer lines, one per call, through the checker of
// layer-2 programs, as Driver.receive hands them to it.
func checkAnswers(t *testing.T, calls []Call, answers []string) *Result {
	t.Helper()
	var c checker
	c.start((&Driver{}).header(), calls, nil)
	for i, line := range answers {
		a, err := ParseAnswer([]byte(line))
		if err != nil {
			t.Fatalf("answer %d %s: %v", i, line, err)
		}
		c.answer(i, &a)
	}
	return c.res
}

// releasedTwice is a program that releases an object twice, and the Go
// runtime's answers (impldriver's): the second release refused as the
// double-free the model reports there.
var releasedTwice = struct {
	calls   []Call
	answers []string
}{
	[]Call{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Handle: 1, Size: 16}, {Op: traces.OpRelease, Target: 1},
		{Op: traces.OpRelease, Target: 1}, {Op: traces.OpScopeExit}, {Op: traces.OpEnd}},
	[]string{
		`{"id":2,"events":[{"op":"scope_enter"}],"outcome":"done"}`,
		`{"id":3,"events":[{"op":"alloc","addr":"0x10000000","size":16,"count":1}],"outcome":"done"}`,
		`{"id":4,"events":[{"op":"release","addr":"0x10000000","count":0},{"op":"free","addr":"0x10000000"}],"outcome":"done"}`,
		`{"id":5,"events":[{"op":"release","addr":"0x10000000"}],"outcome":"refused","message":"double-free: release 0x10000000: object already freed","kinds":["double-free"]}`,
		`{"id":6,"events":[{"op":"scope_exit"}],"outcome":"done"}`,
		`{"id":7,"events":[{"op":"end"}],"outcome":"done"}`,
	},
}

// Item 1: a refusal's kinds are held to the kinds the model reports at
// the refused call's event, each way: a verdict of a kind the refusal
// does not name is not explained by it, and a kind the refusal names that
// the model does not report is a refusal the model does not share.
func TestKillRefusalOfAnotherKind(t *testing.T) {
	const second = 3 // the second release
	for _, tc := range []struct {
		name  string
		kinds string // the refusal's "kinds", as JSON
		want  string // the failure's kind, "" for none
	}{
		{"the model's kind", `["double-free"]`, ""},
		{"no kind", `[]`, ""},
		{"another kind than the model's", `["use-after-free"]`, "double-free"},
		{"the model's and another", `["double-free","use-after-free"]`, "refusal"},
		{"another and the model's", `["use-after-free","double-free"]`, "refusal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := slices.Clone(releasedTwice.answers)
			answers[second] = strings.Replace(answers[second], `["double-free"]`, tc.kinds, 1)
			res := checkAnswers(t, releasedTwice.calls, answers)
			f := res.Failure
			switch {
			case tc.want == "" && f != nil:
				t.Fatalf("failure %v, want none\n%s", f, res.Listing())
			case tc.want == "":
			case f == nil || f.What != tc.want || f.Call != second || f.Event != res.Outcomes[second].Event:
				t.Fatalf("failure %+v, want %s at call %d, event %d\n%s", f, tc.want, second, res.Outcomes[second].Event, res.Listing())
			}
		})
	}
}

// Item 2: a struct recorded with fewer (or more, or other) fields than
// the call gave is another call than the one made.
func TestKillStructFieldsRecorded(t *testing.T) {
	calls := []Call{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Handle: 1, Size: 16}, {Op: traces.OpAlloc, Handle: 2, Size: 16},
		{Op: traces.OpStructInit, Handle: 3, Size: 16, Fields: []int{1, 2}}}
	head := []string{
		`{"id":2,"events":[{"op":"scope_enter"}],"outcome":"done"}`,
		`{"id":3,"events":[{"op":"alloc","addr":"0x10","size":16,"count":1}],"outcome":"done"}`,
		`{"id":4,"events":[{"op":"alloc","addr":"0x20","size":16,"count":1}],"outcome":"done"}`,
	}
	for _, tc := range []struct {
		fields string
		bad    bool
	}{
		{`["0x10","0x20"]`, false},
		{`["0x10"]`, true},
		{`["0x20"]`, true},
		{`[]`, true},
		{`["0x10","0x20","0x20"]`, true},
		{`["0x20","0x10"]`, true},
		{`["0x10","0x0"]`, true},
	} {
		answer := `{"id":5,"events":[{"op":"struct_init","addr":"0x30","size":16,"fields":` + tc.fields + `,"count":1}],"outcome":"done"}`
		res := checkAnswers(t, calls, append(slices.Clone(head), answer))
		f := res.Failure
		switch {
		case !tc.bad && f != nil:
			t.Errorf("fields %s: failure %v, want none", tc.fields, f)
		case tc.bad && (f == nil || f.What != "record" || f.Call != 3 || !strings.Contains(f.Message, `"fields":`+tc.fields)):
			t.Errorf("struct_init of fields [h1 h2] recorded with fields %s: failure %+v, want a record failure at call 3 showing the event", tc.fields, f)
		}
	}
}

// Item 5: the start's timeout is never shorter than the call timeout:
// a driver given 30 s a call is given at least 30 s to say hello.
func TestKillStartTimeoutRaised(t *testing.T) {
	const def = 10 * time.Second // the start's default
	for _, tc := range []struct {
		call, start, want time.Duration
	}{
		{30 * time.Second, 0, 30 * time.Second},
		{0, 0, def},
		{def - time.Millisecond, 0, def},
		{def, 0, def},
		{def + time.Millisecond, 0, def + time.Millisecond},
		{time.Second, 3 * time.Second, 3 * time.Second},
		{5 * time.Second, 3 * time.Second, 5 * time.Second},
		{0, time.Second, 2 * time.Second}, // the call timeout's default, 2 s
	} {
		got := Config{CallTimeout: tc.call, StartTimeout: tc.start}.withDefaults().StartTimeout
		if got != tc.want {
			t.Errorf("CallTimeout %v, StartTimeout %v: the start is given %v, want %v", tc.call, tc.start, got, tc.want)
		}
	}
}

// Item 6: removing a call that makes a tensor removes every call after it
// that names it, and the calls that name what those made: no candidate
// of the shrinker names a handle no call made.
func TestKillShrinkTakesUsers(t *testing.T) {
	calls := []TensorCall{
		{Op: TensorLeaf, Handle: 1, Shape: []int{2}, Values: []float64{1, 2}, RequiresGrad: true},
		{Op: TensorSum, Handle: 2, A: 1},
		{Op: TensorBackward, Target: 2},
		{Op: TensorEnd},
	}
	got := withoutCalls(calls, 1, 2)
	if want := []TensorCall{calls[0], calls[3]}; !slices.EqualFunc(got, want, sameCall) {
		t.Errorf("without the sum:\n%swant:\n%s", listCalls(got), listCalls(want))
	}
	// The shrinker, rewarded for a backward of a handle no call made (a
	// driver's refusal of it has the signature of the failure): it must
	// never try such a program.
	var tried [][]TensorCall
	dangling := func(c []TensorCall) bool {
		tried = append(tried, c)
		if !namesOnlyMade(c) {
			return true
		}
		return slices.ContainsFunc(c, func(x TensorCall) bool { return x.Op == TensorBackward })
	}
	shrunk := shrinkTensorCalls(calls, dangling)
	for _, c := range tried {
		if !namesOnlyMade(c) {
			t.Errorf("the shrinker tried a program that names a handle no call made:\n%s", listCalls(c))
			break
		}
	}
	if !namesOnlyMade(shrunk) {
		t.Errorf("shrunk to a program that names a handle no call made:\n%s", listCalls(shrunk))
	}
}

// namesOnlyMade reports whether every call of calls names only handles
// made by a call before it. It reads the handles a call names from the
// call as the protocol writes it, not from the shrinker's own idea of
// them (uses), which a bug may share.
func namesOnlyMade(calls []TensorCall) bool {
	made := map[int]bool{}
	for _, c := range calls {
		line := c.AppendJSON(nil)
		for _, key := range []string{`"a":`, `"b":`, `"target":`} {
			i := bytes.Index(line, []byte(key))
			if i < 0 {
				continue
			}
			rest := line[i+len(key):]
			n := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
			if h, err := strconv.Atoi(string(rest[:n])); err != nil || !made[h] {
				return false
			}
		}
		if c.Op.Makes() {
			made[c.Handle] = true
		}
	}
	return true
}

// The class of item 6: on generated programs, every run of calls removed
// leaves a program that names only handles made, and so does every
// candidate the shrinker tries.
func TestShrinkCandidatesNameOnlyMade(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 6))
	removals, candidates := 0, 0
	for range 40 {
		p := GenerateTensorProgram(rng)
		for i := range len(p) - 1 {
			for _, n := range []int{1, 2, 5} {
				j := min(i+n, len(p)-1)
				removals++
				if c := withoutCalls(p, i, j); !namesOnlyMade(c) {
					t.Fatalf("without calls [%d, %d) of:\n%sleft:\n%s", i, j, listCalls(p), listCalls(c))
				}
			}
		}
		// A failure of any backward: shrinking takes many steps, each
		// candidate checked.
		shrinkTensorCalls(p, func(c []TensorCall) bool {
			candidates++
			if !namesOnlyMade(c) {
				t.Fatalf("the shrinker tried a program that names a handle no call made:\n%s", listCalls(c))
			}
			return slices.ContainsFunc(c, func(x TensorCall) bool { return x.Op == TensorBackward })
		})
	}
	if removals < 1000 || candidates < 200 {
		t.Errorf("%d removals and %d candidates checked: too few to stand for the class", removals, candidates)
	}
}

// Item 8 and its class: of two drivers' runs, the disagreement reported is
// at the earliest call that shows one, whatever shows it and in whatever
// order judge meets them: answers that differ, a driver that broke, the
// model's verdict on a driver's run.
func TestJudgeEarliest(t *testing.T) {
	const n = 6
	calls := make([]TensorCall, n)
	for i := range n - 1 {
		calls[i] = TensorCall{Op: TensorLeaf, Handle: i + 1, Shape: []int{1}, Values: []float64{1}}
	}
	calls[n-1] = TensorCall{Op: TensorEnd}
	// run makes a run whose answers are all "done", but at differ
	// ("refused"), cut at broke (the driver exited there) and failed by
	// the model at model; -1: none.
	run := func(differ, broke, model int) *Result {
		res := &Result{TensorCalls: calls}
		for i := range n {
			if i == broke {
				res.Failure = &Failure{What: string(TroubleExit), Call: i, Event: -1, Message: "exited"}
				break
			}
			o := Outcome{Event: -1}
			if i == differ {
				o.Refused, o.Message = true, "no"
			}
			res.Outcomes = append(res.Outcomes, o)
		}
		if model >= 0 && res.Failure == nil {
			res.Failure = &Failure{What: "leak", Call: model, Event: -1, Message: "a leak"}
		}
		return res
	}
	p := pair{a: &Runner{}, b: &Runner{}, opts: DiffOptions{ModelA: true, ModelB: true}.withDefaults()}
	// The case: the answers differ at call 0, B exits at call 2.
	if d := p.judge(calls, run(-1, -1, -1), run(0, 2, -1)); d == nil || d.Call != 0 || d.Field != "outcome" ||
		!strings.Contains(d.Report(), "disagree at call 0: outcome") {
		t.Fatalf("differ at call 0, B exits at call 2: %+v, want the outcome at call 0", d)
	}
	cases := 0
	for differ := -1; differ < n; differ++ {
		for broke := -1; broke < n; broke++ {
			for model := -1; model < n; model++ {
				for side := range 2 {
					ra, rb := run(-1, -1, -1), run(differ, broke, model)
					if side == 1 {
						ra, rb = rb, ra
					}
					want := n // what shows: the answer that differs, if given; the break; the model's verdict, on a run not broken
					if differ >= 0 && (broke < 0 || differ < broke) {
						want = differ
					}
					if broke >= 0 {
						want = min(want, broke)
					}
					if model >= 0 && broke < 0 {
						want = min(want, model)
					}
					cases++
					d := p.judge(calls, ra, rb)
					switch {
					case want == n && d != nil:
						t.Fatalf("differ %d, broke %d, model %d (side %d): %v, want none", differ, broke, model, side, d)
					case want < n && (d == nil || d.Call != want):
						t.Fatalf("differ %d, broke %d, model %d (side %d): %+v, want a disagreement at call %d", differ, broke, model, side, d, want)
					}
				}
			}
		}
	}
	t.Logf("%d pairs of runs judged", cases)
}
