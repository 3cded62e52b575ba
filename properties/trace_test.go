package properties

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// TestEncodeTrace holds the round trip's encoder to the Writer: the same
// bytes for every run's trace, header included, pooled buffer or not.
func TestEncodeTrace(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for i := range 200 {
		res, _ := Run(Generate(r), impl.Config{Faults: []impl.Fault{impl.FaultArenaGrowFreesOld}})
		var want bytes.Buffer
		if err := writeTrace(&want, res.Header, res.Trace); err != nil {
			t.Fatal(err)
		}
		got := encodeTrace(nil, res.Header, res.Trace)
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("run %d: encodeTrace wrote\n%s\nthe Writer writes\n%s", i, got, want.Bytes())
		}
	}
	// An event the Writer refuses must not read back either.
	bad := encodeTrace(nil, traces.Header{Format: traces.FormatName, Version: traces.Version}, []traces.Event{{Op: 200}})
	rd, err := traces.NewReader(bytes.NewReader(bad))
	if err == nil {
		var ev traces.Event
		err = rd.Next(&ev)
	}
	if err == nil {
		t.Error("an event with an invalid op read back")
	}
}

// TestRoundTripSeesADifference: the round trip's replay of the written
// trace reports a mismatch whenever the replay's verdicts are not the
// live check's, one by one in kind and event: one missing, one more, one
// at another event or of another kind, and a trace that does not read
// back (which the round trip, too, hands to the replay).
func TestRoundTripSeesADifference(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	var s *session
	for range 1000 {
		s = newSession(impl.Config{}, Generate(r))
		for _, st := range s.res.Program.Steps {
			s.apply(st)
		}
		if res := s.finish(); len(res.Verdicts) > 1 {
			break
		}
	}
	res := s.res
	if len(res.Verdicts) < 2 || len(res.Mismatches) > 0 {
		t.Fatalf("no clean run with two verdicts to change: %d verdicts, mismatches %v", len(res.Verdicts), res.Mismatches)
	}
	s.roundTrip() // writes the trace, which finish writes for a failing run alone
	if len(res.Mismatches) > 0 {
		t.Fatalf("the round trip of a clean run reports %v", res.Mismatches)
	}
	live := slices.Clone(res.Verdicts)
	changes := map[string]func([]Verdict) []Verdict{
		"one missing": func(vs []Verdict) []Verdict { return vs[1:] },
		"one more":    func(vs []Verdict) []Verdict { return append(vs, vs[0]) },
		"another event": func(vs []Verdict) []Verdict {
			vs[1].Event++
			return vs
		},
		"another kind": func(vs []Verdict) []Verdict {
			vs[0].Kind = map[bool]traces.Kind{true: traces.Overlap, false: traces.Leak}[vs[0].Kind == traces.Leak]
			return vs
		},
	}
	last := len(res.Calls) - 1
	for name, change := range changes {
		res.Mismatches = nil
		res.Verdicts = change(slices.Clone(live))
		s.replay(last)
		if len(res.Mismatches) != 1 || res.Mismatches[0].Kind != MismatchReplay {
			t.Errorf("%s: the round trip reports %v", name, res.Mismatches)
		}
	}
	res.Mismatches, res.Verdicts = nil, live
	s.replay(last)
	if len(res.Mismatches) != 0 {
		t.Fatalf("the round trip of the run as it was reports %v", res.Mismatches)
	}
	res.Trace = append(res.Trace, traces.Event{Op: 200})
	s.roundTrip()
	if len(res.Mismatches) != 1 || res.Mismatches[0].Kind != MismatchReplay {
		t.Errorf("an unreadable trace: the round trip reports %v", res.Mismatches)
	}
}

// TestReleasedSessionsRunLikeNew: Run hands its session, with the model
// Checker in it, to the next Run (release), and Passes its result too
// (releaseAll); a program's result must not depend on what ran before
// it. Programs run once after others, faulty and not, Passes between
// them, and again each on sessions never used, give the same results.
func TestReleasedSessionsRunLikeNew(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	faults := []impl.Config{{}, {Faults: []impl.Fault{impl.FaultArenaGrowFreesOld}}, {Reuse: impl.ReuseFIFO}}
	type run struct {
		p   Program
		cfg impl.Config
		res *Result
	}
	var runs []run
	for i := range 150 {
		p, cfg := Generate(r), faults[i%len(faults)]
		res, _ := Run(p, cfg)
		runs = append(runs, run{p, cfg, res})
		Passes(Generate(r), faults[(i+1)%len(faults)])
	}
	for i, ru := range runs {
		s := freshSession(ru.cfg, ru.p)
		for _, st := range ru.p.Steps {
			s.apply(st)
		}
		fresh := s.finish()
		if d := cmp.Diff(fresh, ru.res, cmp.AllowUnexported(Result{}), cmpopts.EquateEmpty(),
			cmp.Comparer(func(a, b error) bool { return fmt.Sprint(a) == fmt.Sprint(b) })); d != "" {
			t.Fatalf("run %d: after other runs (+) and on a new session (-):\n%s", i, d)
		}
	}
}

// TestPassesIsRun: Passes says a program passes exactly when Run finds no
// failure, with every program fault of the catalog on in turn and none,
// each run after others whose results Passes kept for reuse.
func TestPassesIsRun(t *testing.T) {
	cfgs := []impl.Config{{}, {Reuse: impl.ReuseFIFO}}
	for _, fi := range impl.Catalog() {
		if fi.Engine == impl.EngineProgram {
			cfgs = append(cfgs, impl.Config{Faults: []impl.Fault{fi.Name}})
		}
	}
	r := rand.New(rand.NewPCG(4, 4))
	failed := 0
	for i := range 1500 {
		p, cfg := Generate(r), cfgs[i%len(cfgs)]
		_, f := Run(p, cfg)
		if Passes(p, cfg) != (f == nil) {
			t.Fatalf("program %d under %v: Passes says %v, Run finds %v", i, cfg.Faults, f == nil, f)
		}
		if f != nil {
			failed++
		}
		if _, f2 := Run(p, cfg); (f2 == nil) != (f == nil) {
			t.Fatalf("program %d under %v: Run after Passes finds %v, before %v", i, cfg.Faults, f2, f)
		}
	}
	if failed < 20 {
		t.Fatalf("only %d of the programs failed: the test did not hold Passes to a failure", failed)
	}
}

// TestEveryRunRoundTrips holds the round trip, which finish makes for a
// failing run alone, for every run, passing or failing: its written trace
// reads back and replays to the live verdicts, over programs under every
// program fault of the catalog and none. And it holds the round trip's
// shortcut to the replay it stands for: wherever the written trace reads
// back as the events stepped and the live verdicts are in event order,
// replaying it gives the live verdicts; and the shortcut is taken for
// most clean runs, else the round trip costs what it did.
func TestEveryRunRoundTrips(t *testing.T) {
	cfgs := []impl.Config{{}, {Reuse: impl.ReuseFIFO}}
	for _, fi := range impl.Catalog() {
		if fi.Engine == impl.EngineProgram {
			cfgs = append(cfgs, impl.Config{Faults: []impl.Fault{fi.Name}})
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	n := 3000
	if testing.Short() {
		n = 600
	}
	shortcuts, clean := 0, 0
	for i := range n {
		cfg := cfgs[i%len(cfgs)]
		s := newSession(cfg, Generate(r))
		for _, st := range s.res.Program.Steps {
			s.apply(st)
		}
		res := s.finish()
		if b, _ := check(res); b == nil {
			s.roundTrip() // finish made none
		}
		for _, m := range res.Mismatches {
			if m.Kind == MismatchReplay {
				t.Fatalf("program %d under %v: %s\n%v", i, cfg.Faults, m.What, res.Program)
			}
		}
		if len(cfg.Faults) == 0 {
			clean++
		}
		if !s.readsBack() || !inEventOrder(res.Verdicts) {
			continue
		}
		if len(cfg.Faults) == 0 {
			shortcuts++
		}
		before := len(res.Mismatches)
		s.replay(len(res.Calls) - 1)
		if len(res.Mismatches) != before {
			t.Fatalf("program %d under %v: the shortcut was taken, and the replay reports %v\n%v",
				i, cfg.Faults, res.Mismatches[before:], res.Program)
		}
	}
	if shortcuts < clean*9/10 {
		t.Errorf("the shortcut was taken for %d of %d runs without a fault", shortcuts, clean)
	}
}

// TestSameEventSeesEveryField: sameEvent tells apart two events that
// differ in any one field of traces.Event.
func TestSameEventSeesEveryField(t *testing.T) {
	et := reflect.TypeFor[traces.Event]()
	for i := range et.NumField() {
		var base, changed traces.Event
		reflect.ValueOf(&changed).Elem().Field(i).Set(nonZero(et.Field(i).Type))
		if sameEvent(&base, &changed) || sameEvent(&changed, &base) {
			t.Errorf("traces.Event.%s: sameEvent does not compare it", et.Field(i).Name)
		}
	}
	ev := traces.Event{Op: traces.OpStructInit, Fields: []traces.Addr{16, 0}}
	other := ev
	other.Fields = []traces.Addr{16, 32}
	if sameEvent(&ev, &other) {
		t.Error("sameEvent does not compare the fields one by one")
	}
}
