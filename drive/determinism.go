package drive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// Determinism (PROTOCOL.md, "Determinism"): a program must get the same
// answers, addresses included, whatever the driver ran before it. Shrinking
// runs hundreds of candidates in one driver process and a calls file is
// replayed in a fresh one, so a driver whose answers depend on the programs
// before them shrinks badly and writes counterexamples that do not fail
// again. tlcheck does not assume it: a finding is run once more, alone, in
// a driver started for it, as --replay would run it (reproduce), and says
// so when that run does not fail the same way or answers otherwise;
// --replay of a file that gives no failure runs it twice in one driver
// and compares (AnswersDiffer). A driver that cannot make reset give that
// guarantee asks in its hello ("restart": true) to be started again for
// every program.

// AnswersDiffer compares two runs of the same calls and describes where
// the driver answered differently: another outcome, other events, or
// fewer answers; "" if every answer is the same (a refusal's message,
// free text that often names an address, is not compared). Addresses are compared up
// to a renaming, one to one, as a process started again has its heap
// elsewhere (address space layout randomisation): the same program must
// give the same address where it gave the same address, and another
// where another, which is what decides the model's verdicts (a reuse, a
// stale record), whatever the numbers.
func AnswersDiffer(a, b *Result) string {
	rn := renaming{ab: map[traces.Addr]traces.Addr{}, ba: map[traces.Addr]traces.Addr{}}
	seenA, seenB := map[traces.Addr]int{}, map[traces.Addr]int{} // the call that first gave each address
	n := min(len(a.Outcomes), len(b.Outcomes))
	for i := range n {
		oa, ob := a.Outcomes[i], b.Outcomes[i]
		if oa.Refused != ob.Refused || !slices.Equal(oa.Kinds, ob.Kinds) { // a message is free text, often with addresses
			return fmt.Sprintf("at call %d: %s, then %s", i, answerText(oa), answerText(ob))
		}
		ea, eb := events(a, oa), events(b, ob)
		if len(ea) != len(eb) {
			return fmt.Sprintf("at call %d: %d events, then %d", i, len(ea), len(eb))
		}
		for k := range ea {
			if !rn.sameEvent(&ea[k], &eb[k]) {
				return fmt.Sprintf("at call %d: %s%s, then %s%s", i, traces.AppendEvent(nil, &ea[k]), seen(seenA, ea[k].Addr, i),
					traces.AppendEvent(nil, &eb[k]), seen(seenB, eb[k].Addr, i))
			}
			note(seenA, &ea[k], i)
			note(seenB, &eb[k], i)
		}
	}
	if len(a.Outcomes) != len(b.Outcomes) {
		return fmt.Sprintf("%d calls answered, then %d", len(a.Outcomes), len(b.Outcomes))
	}
	return ""
}

// note keeps the call that first gave each address of ev.
func note(seen map[traces.Addr]int, ev *traces.Event, call int) {
	for _, a := range append([]traces.Addr{ev.Addr, ev.NewAddr}, ev.Fields...) {
		if _, ok := seen[a]; !ok && a != 0 {
			seen[a] = call
		}
	}
}

// seen says where in its run an address was first given, for a message.
func seen(seen map[traces.Addr]int, a traces.Addr, call int) string {
	if a == 0 {
		return ""
	}
	if c, ok := seen[a]; ok {
		return fmt.Sprintf(" (an address it gave at call %d)", c)
	}
	return " (an address new in that run)"
}

func answerText(o Outcome) string {
	if o.Refused {
		return fmt.Sprintf("refused (%q)", o.Message)
	}
	return "done"
}

// events returns the events of the call o answers.
func events(r *Result, o Outcome) []traces.Event {
	if o.Event < 0 || o.Event+o.Events > len(r.Trace) {
		return nil
	}
	return r.Trace[o.Event : o.Event+o.Events]
}

// renaming is a one-to-one map between the addresses of two runs, built
// as they are compared.
type renaming struct{ ab, ba map[traces.Addr]traces.Addr }

// same reports whether a (of the first run) and b (of the second) are
// the same address under the renaming, extending it if neither is mapped
// yet. NULL is only NULL.
func (rn renaming) same(a, b traces.Addr) bool {
	if a == 0 || b == 0 {
		return a == b
	}
	if x, ok := rn.ab[a]; ok {
		return x == b
	}
	if _, ok := rn.ba[b]; ok {
		return false
	}
	rn.ab[a], rn.ba[b] = b, a
	return true
}

// sameEvent compares what a driver answers in an event: the op, the
// addresses (renamed), and what it says of them.
func (rn renaming) sameEvent(a, b *traces.Event) bool {
	if a.Op != b.Op || a.Size != b.Size || a.Name != b.Name || len(a.Fields) != len(b.Fields) ||
		a.Count != b.Count || a.HasCount != b.HasCount || a.Slot != b.Slot || a.Slots != b.Slots || a.Var != b.Var ||
		!rn.same(a.Addr, b.Addr) || !rn.same(a.NewAddr, b.NewAddr) {
		return false
	}
	for i := range a.Fields {
		if !rn.same(a.Fields[i], b.Fields[i]) {
			return false
		}
	}
	return true
}

// fresh runs a finding's calls alone in a driver started for them, as
// `tlcheck fuzz --exec CMD --replay FILE` runs its calls file.
func (r *Runner) fresh(res *Result) (*Result, error) {
	d, err := Start(r.cfg)
	if err != nil {
		return nil, err
	}
	var again *Result
	if res.TensorCalls != nil {
		again, err = d.RunTensor(res.TensorCalls)
	} else {
		again, err = d.Run(res.Calls)
	}
	if cerr := d.Close(); err == nil && again != nil && again.Failure == nil && cerr != nil {
		if t, ok := cerr.(*Trouble); ok {
			again.Failure = &Failure{What: string(t.Kind), Call: len(again.Outcomes), Event: -1, Message: t.What, Stderr: t.Stderr, sig: string(t.Kind)}
		}
	}
	return again, err
}

// reproduce runs f's shrunk calls once more in a fresh driver before f is
// reported. When they fail the same way there, f takes that run (its trace
// is the one --replay gives); when they do not, or the driver answered
// otherwise, f says so (Finding.Reproduced, Finding.Determinism, and the
// failure's message), every time.
func (r *Runner) reproduce(f *Finding) error {
	again, err := r.fresh(f.Result)
	if err != nil {
		return fmt.Errorf("drive: running the counterexample again in a fresh driver: %w", err)
	}
	fail := f.Result.Failure
	diff := AnswersDiffer(f.Result, again)
	switch {
	case again.Failure == nil || again.Failure.sig != fail.sig:
		got := "no failure"
		if again.Failure != nil {
			got = again.Failure.Error()
		}
		f.Determinism = "not reproduced: run alone in a fresh driver, as --replay runs it, the counterexample gave " + got
		if diff != "" {
			f.Determinism += "; the driver answered differently " + diff
		}
		f.Determinism += ". The driver is not deterministic: its answers depend on the programs it ran before (PROTOCOL.md, Determinism)"
	case diff != "":
		keepShown(again.Failure, fail)
		f.Reproduced, f.Result = true, again
		f.Determinism = "reproduced in a fresh driver, but it answered differently " + diff +
			": the driver is not deterministic (PROTOCOL.md, Determinism)"
	default:
		keepShown(again.Failure, fail)
		f.Reproduced, f.Result = true, again
		return nil
	}
	if !strings.Contains(f.Result.Failure.Message, "not deterministic") { // Shrink may have said so already
		f.Result.Failure.Message += " (" + f.Determinism + ")"
	}
	return nil
}

// keepShown carries onto the run again what the shrunk program's failure
// said of the program before shrinking (see firstSeen).
func keepShown(again, shrunk *Failure) {
	if shrunk.shown != "" && again.shown == "" {
		again.shown = shrunk.shown
		again.Message += shrunk.shown
	}
}

// retire ends the driver after a program when its hello asks to be
// started for every program ("restart"), so that the next program meets
// a fresh process; a driver that misbehaves at its end (output after its
// last answer, a failing exit) makes that the program's failure.
func (r *Runner) retire(res *Result, err error) (*Result, error) {
	if !r.hello.Restart || r.d == nil {
		return res, err
	}
	d := r.d
	r.d = nil
	cerr := d.Close()
	if t, ok := cerr.(*Trouble); ok && err == nil && res != nil && res.Failure == nil {
		res.Failure = &Failure{What: string(t.Kind), Call: len(res.Outcomes), Event: -1, Message: t.What, Stderr: t.Stderr, sig: string(t.Kind)}
	}
	return res, err
}
