package drive_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// The answer checker, fed answers mutated from correct ones: the Go
// runtime's (impldriver's) answers to generated programs, each program's
// answers run first as they are (they must pass) and then with one answer
// broken one way, which must be a failure: of the kind the mutation
// names, at the call it names (that answer's, the next, or one after).
// Naming them keeps a check that another covers for (the record check and
// the model's verdict on the same event) caught on its own. Each mutation stands for a class of driver bug (a field dropped, an
// event added, a kind changed, an id moved, a count changed, ...) and so
// for a class of checker bug that would let it through. The drivers are
// served in this process (drive.StartFunc), many at once.

// mutation is one way to break the answer to line k of a program (0: the
// reset), given every correct answer line: it returns the lines the
// driver gives instead (an entry may hold two answer lines, or be nil
// for none), or nil where it does not apply to that answer.
type mutation struct {
	name  string
	apply func(answers [][]byte, k int) [][]byte
	what  string // the failure's kind it must make ("" any)
	at    int    // the failure's call, from the broken answer's: 0 its own, 1 the next; later: its own or after
}

// failedAs reports whether f is the failure m must make, the broken
// answer being call's (-1: the reset's).
func (m mutation) failedAs(f *drive.Failure, call int) bool {
	if m.what != "" && f.What != m.what {
		return false
	}
	return m.at == later && f.Call >= call || f.Call == max(call+m.at, 0)
}

// wanted says what failure m must make, the broken answer being call's.
func (m mutation) wanted(call int) string {
	what := m.what
	if what == "" {
		what = "a failure"
	}
	if m.at == later {
		return fmt.Sprintf("%s at call %d or after", what, max(call, 0))
	}
	return fmt.Sprintf("%s at call %d", what, max(call+m.at, 0))
}

// later is a mutation's failure at the broken answer's call or after.
const later = -1

// fails returns m that must make a failure of kind what at call offset at.
func (m mutation) fails(what string, at int) mutation {
	m.what, m.at = what, at
	return m
}

// edit returns a mutation that changes the parsed answer k (a call's:
// k > 0) with f, which reports whether it applies.
func edit(name string, f func(a *drive.Answer) bool) mutation {
	return mutation{name: name, at: later, apply: func(answers [][]byte, k int) [][]byte {
		if k == 0 {
			return nil
		}
		a, err := drive.ParseAnswer(answers[k])
		if err != nil {
			panic(err)
		}
		a.Events = slices.Clone(a.Events)
		for i := range a.Events {
			a.Events[i].Fields = slices.Clone(a.Events[i].Fields)
		}
		if !f(&a) {
			return nil
		}
		out := slices.Clone(answers)
		out[k] = a.AppendJSON(nil)
		return out
	}}
}

// own returns a mutation that changes the call's own event (the first)
// with f.
func own(name string, f func(ev *traces.Event) bool) mutation {
	return edit(name, func(a *drive.Answer) bool { return len(a.Events) > 0 && f(&a.Events[0]) })
}

// raw returns a mutation of answer k's line as text.
func raw(name string, f func(line []byte, k int) []byte) mutation {
	return mutation{name: name, at: later, apply: func(answers [][]byte, k int) [][]byte {
		line := f(answers[k], k)
		if line == nil || bytes.Equal(line, answers[k]) {
			return nil
		}
		out := slices.Clone(answers)
		out[k] = line
		return out
	}}
}

// lines returns a mutation that rearranges the answer lines, given k.
func lines(name string, f func(answers [][]byte, k int) [][]byte) mutation {
	return mutation{name: name, at: later, apply: func(answers [][]byte, k int) [][]byte {
		return f(slices.Clone(answers), k)
	}}
}

// targetOps are the calls that name an object by its handle (Target).
var targetOps = []traces.Op{traces.OpAcquire, traces.OpRelease, traces.OpRegister, traces.OpUnregister,
	traces.OpParamRegister, traces.OpRead, traces.OpWrite}

// nowhere is an address no runtime of the tests gives.
const nowhere = traces.Addr(0xdead0000)

// otherOp is an op of the calls' table other than op.
func otherOp(op traces.Op) traces.Op {
	ops := append(drive.CallOps(2), drive.CallOps(3)...)
	i := slices.Index(ops, op)
	return ops[(i+1)%len(ops)]
}

// layer2Mutations are the ways an answer of layers 2 and 3 is broken.
var layer2Mutations = []mutation{
	// The id: every answer is to the call of its id, in order.
	edit("id+1", func(a *drive.Answer) bool { a.ID++; return true }).fails("protocol", 0),
	edit("id-1", func(a *drive.Answer) bool { a.ID--; return true }).fails("protocol", 0),
	lines("answers swapped", func(as [][]byte, k int) [][]byte {
		if k+1 >= len(as) || bytes.Equal(as[k], as[k+1]) {
			return nil
		}
		as[k], as[k+1] = as[k+1], as[k]
		return as
	}).fails("protocol", 0),
	lines("answer given twice", func(as [][]byte, k int) [][]byte {
		as[k] = slices.Concat(as[k], []byte("\n"), as[k])
		return as
	}).fails("protocol", 1),
	lines("answer left out", func(as [][]byte, k int) [][]byte {
		if k+1 >= len(as) { // the last: a timeout, too slow for the class
			return nil
		}
		as[k] = nil
		return as
	}).fails("protocol", 0),
	// The line: not an answer.
	raw("truncated", func(line []byte, k int) []byte { return line[:len(line)/2] }).fails("protocol", 0),
	raw(`"outcome" dropped`, func(line []byte, k int) []byte {
		return cutFirst(line, `,"outcome":"done"`, `,"outcome":"refused"`)
	}).fails("protocol", 0),
	raw(`"id" dropped`, func(line []byte, k int) []byte { return dropID(line) }).fails("protocol", 0),
	raw(`an event's "addr" dropped`, func(line []byte, k int) []byte {
		i := bytes.Index(line, []byte(`,"addr":"`))
		if i < 0 {
			return nil
		}
		j := bytes.IndexByte(line[i+9:], '"')
		return slices.Concat(line[:i], line[i+9+j+1:])
	}).fails("protocol", 0),
	// The reset: answered with nothing.
	mutation{name: "the reset answered with an event", at: 1, what: "protocol", apply: func(as [][]byte, k int) [][]byte {
		if k != 0 {
			return nil
		}
		as = slices.Clone(as)
		as[0] = bytes.Replace(as[0], []byte(`"events":[]`), []byte(`"events":[{"op":"scope_enter"}]`), 1)
		return as
	}},
	mutation{name: "the reset refused", at: 1, what: "protocol", apply: func(as [][]byte, k int) [][]byte {
		if k != 0 {
			return nil
		}
		as = slices.Clone(as)
		as[0] = bytes.Replace(as[0], []byte(`"outcome":"done"`), []byte(`"outcome":"refused","message":"no"`), 1)
		return as
	}},
	// The events: the call's own, then only frees.
	edit("no events", func(a *drive.Answer) bool { a.Events = nil; return true }).fails("record", 0),
	own("the own event's op", func(ev *traces.Event) bool { ev.Op = otherOp(ev.Op); return true }).fails("record", 0),
	// The address a call makes is the runtime's to choose, but the calls
	// after it name what it made there (a release, a free at scope_exit):
	// moved, they name another. (An arena's buffer is not named again, and
	// may be anywhere in the frame.)
	own("a made object's address moved", func(ev *traces.Event) bool {
		if ev.Op != traces.OpAlloc && ev.Op != traces.OpStructInit || ev.Addr == 0 {
			return false
		}
		ev.Addr += 8
		return true
	}),
	own("the target's address moved", func(ev *traces.Event) bool {
		if !slices.Contains(targetOps, ev.Op) {
			return false
		}
		ev.Addr += 8
		return true
	}).fails("record", 0),
	{name: "the target's address another object's", what: "record", apply: func(as [][]byte, k int) [][]byte {
		if k == 0 {
			return nil
		}
		a, err := drive.ParseAnswer(as[k])
		if err != nil || len(a.Events) == 0 || !slices.Contains(targetOps, a.Events[0].Op) {
			return nil
		}
		for _, line := range as[1:] { // the address of an object the program made
			b, _ := drive.ParseAnswer(line)
			if len(b.Events) > 0 && b.Events[0].Op == traces.OpAlloc && b.Events[0].Addr != 0 && b.Events[0].Addr != a.Events[0].Addr {
				a.Events[0].Addr = b.Events[0].Addr
				out := slices.Clone(as)
				out[k] = a.AppendJSON(nil)
				return out
			}
		}
		return nil
	}},
	own("the own event's size", func(ev *traces.Event) bool {
		if ev.Size == 0 && ev.Op != traces.OpAlloc && ev.Op != traces.OpStructInit && ev.Op != traces.OpArenaGet && ev.Op != traces.OpRead && ev.Op != traces.OpWrite {
			return false
		}
		ev.Size++
		return true
	}).fails("record", 0),
	own("the own event's name", func(ev *traces.Event) bool {
		if ev.Name == "" {
			return false
		}
		ev.Name += "x"
		return true
	}).fails("record", 0),
	own("the own event's var", func(ev *traces.Event) bool {
		if ev.Var == "" {
			return false
		}
		ev.Var += "x"
		return true
	}).fails("record", 0),
	own("the own event's slots", func(ev *traces.Event) bool {
		if ev.Op != traces.OpFnEnter {
			return false
		}
		ev.Slots++
		return true
	}).fails("record", 0),
	own("the own event's slot", func(ev *traces.Event) bool {
		if ev.Op != traces.OpArenaGet {
			return false
		}
		ev.Slot++
		return true
	}).fails("record", 0),
	own("a struct's field dropped", func(ev *traces.Event) bool {
		// A struct at NULL is the same answer with any number of NULL
		// fields (PROTOCOL.md): dropping one is no change.
		if len(ev.Fields) == 0 || ev.Addr == 0 {
			return false
		}
		ev.Fields = ev.Fields[:len(ev.Fields)-1]
		return true
	}).fails("record", 0),
	own("a struct's field added", func(ev *traces.Event) bool {
		// A struct at NULL is the same answer with any number of NULL
		// fields (PROTOCOL.md): adding its own address, NULL, is no change.
		if ev.Op != traces.OpStructInit || ev.Addr == 0 {
			return false
		}
		ev.Fields = append(ev.Fields, ev.Addr)
		return true
	}).fails("record", 0),
	own("a struct's field moved", func(ev *traces.Event) bool {
		if len(ev.Fields) == 0 {
			return false
		}
		ev.Fields[0] += 8
		return true
	}).fails("record", 0),
	own("the count changed", func(ev *traces.Event) bool {
		if !ev.HasCount {
			return false
		}
		ev.Count++
		return true
	}).fails("count-mismatch", 0),
	edit("the own event twice", func(a *drive.Answer) bool {
		if len(a.Events) == 0 {
			return false
		}
		a.Events = slices.Insert(a.Events, 1, a.Events[0])
		return true
	}).fails("record", 0),
	// (A record failure; of an alloc of size 0, the checker names it
	// zero-sized, taking the free's address for the alloc's.)
	edit("a free first", func(a *drive.Answer) bool {
		a.Events = slices.Insert(a.Events, 0, traces.Event{Op: traces.OpFree, Addr: nowhere})
		return true
	}).fails("", 0),
	edit("a free of nothing added", func(a *drive.Answer) bool {
		a.Events = append(a.Events, traces.Event{Op: traces.OpFree, Addr: nowhere})
		return true
	}).fails("invalid-address", 0),
	edit("a free again", func(a *drive.Answer) bool {
		i := slices.IndexFunc(a.Events, func(ev traces.Event) bool { return ev.Op == traces.OpFree })
		if i < 0 {
			return false
		}
		a.Events = slices.Insert(a.Events, i+1, a.Events[i])
		return true
	}).fails("double-free", 0),
	edit("a free dropped", func(a *drive.Answer) bool {
		i := slices.IndexFunc(a.Events, func(ev traces.Event) bool { return ev.Op == traces.OpFree })
		if i < 0 {
			return false
		}
		a.Events = slices.Delete(a.Events, i, i+1)
		return true
	}),
	// The outcome and its kinds.
	// (Not of end: a runtime may refuse it for the leaks the model
	// reports there, the program's.)
	edit("done made refused", func(a *drive.Answer) bool {
		if a.Refused || len(a.Events) > 0 && a.Events[0].Op == traces.OpEnd {
			return false
		}
		a.Refused, a.Message = true, "refused by a mutation"
		return true
	}).fails("refusal", 0),
	edit("refused made done", func(a *drive.Answer) bool {
		if !a.Refused {
			return false
		}
		a.Refused, a.Message, a.Kinds = false, "", nil
		return true
	}).fails("", 0),
	edit("a kind changed", func(a *drive.Answer) bool {
		if len(a.Kinds) == 0 {
			return false
		}
		for _, k := range traces.Kinds() {
			if !slices.Contains(a.Kinds, k) {
				a.Kinds = []traces.Kind{k}
				return true
			}
		}
		return false
	}).fails("", 0),
}

// cutFirst returns line without the first of cuts it holds (nil if none).
func cutFirst(line []byte, cuts ...string) []byte {
	for _, c := range cuts {
		if i := bytes.Index(line, []byte(c)); i >= 0 {
			return slices.Concat(line[:i], line[i+len(c):])
		}
	}
	return nil
}

// dropID returns line without its leading "id".
func dropID(line []byte) []byte {
	i := bytes.IndexByte(line, ',')
	if !bytes.HasPrefix(line, []byte(`{"id":`)) || i < 0 {
		return nil
	}
	return slices.Concat([]byte("{"), line[i+1:])
}

// program is calls and the Go runtime's answers to them.
type program struct {
	calls   []drive.Call
	answers [][]byte
}

// generated returns n programs generated from seed, with their answers.
func generated(t *testing.T, seed uint64, n int) []program {
	rng := rand.New(rand.NewPCG(seed, 29))
	ps := make([]program, n)
	for i := range ps {
		_, calls := drive.Lower(flat.Generate(rng), nil)
		ps[i] = program{calls, transcript(t, calls)}
	}
	return ps
}

// replay runs a program's answer lines on a driver served in this
// process: the driver answers its k-th line with answers[k]. It returns
// the run and what closing the driver found (a line after the last
// answer).
func replay(calls []drive.Call, answers [][]byte) (*drive.Result, error, error) {
	d, err := drive.StartFunc(drive.Config{CallTimeout: hangTimeout}, lineServer(hello2, func(k int, id int64) []byte {
		if k < len(answers) {
			return answers[k]
		}
		return nil
	}))
	if err != nil {
		return nil, nil, err
	}
	res, err := d.Run(calls)
	return res, d.Close(), err
}

// TestMutatedAnswers: every mutation of a correct answer is a failure.
func TestMutatedAnswers(t *testing.T) {
	n := 25 // programs, each broken once by each mutation (and at the reset)
	if !testing.Short() {
		n = 300
	}
	programs := generated(t, 1, n)
	type job struct {
		m    mutation
		p    int
		k    int
		outs [][]byte
	}
	var jobs []job
	applied := map[string]int{}
	rng := rand.New(rand.NewPCG(2, 29))
	for pi, p := range programs {
		for _, m := range layer2Mutations {
			// The reset's answer, then the first of the calls' the
			// mutation applies to, from one drawn.
			if outs := m.apply(p.answers, 0); outs != nil {
				jobs = append(jobs, job{m, pi, 0, outs})
				applied[m.name]++
			}
			from := rng.IntN(len(p.calls))
			for i := range len(p.calls) {
				k := 1 + (from+i)%len(p.calls)
				if outs := m.apply(p.answers, k); outs != nil {
					jobs = append(jobs, job{m, pi, k, outs})
					applied[m.name]++
					break
				}
			}
		}
	}
	for _, m := range layer2Mutations {
		if applied[m.name] < 5 {
			t.Errorf("mutation %q applied to %d answers: too few to stand for its class", m.name, applied[m.name])
		}
	}
	var mu sync.Mutex
	var work []func()
	failed := map[string]int{}
	for pi, p := range programs {
		work = append(work, func() {
			res, closed, err := replay(p.calls, p.answers)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || closed != nil || res.Failure != nil {
				failed["as answered"]++
				if failed["as answered"] == 1 {
					t.Errorf("program %d as the Go runtime answered it: %v, %v, %v\n%s", pi, err, closed, res.Failure, res.Listing())
				}
			}
		})
	}
	for _, j := range jobs {
		work = append(work, func() {
			p := programs[j.p]
			res, closed, err := replay(p.calls, j.outs)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("%s, program %d, answer %d: %v", j.m.name, j.p, j.k, err)
			case res.Failure == nil && closed != nil && j.k == len(j.outs)-1:
				// A line after the last answer: Close finds it.
			case res.Failure == nil || !j.m.failedAs(res.Failure, j.k-1):
				failed[j.m.name]++
				if failed[j.m.name] <= 2 {
					t.Errorf("%s, answer %d of program %d: failure %v, want %s\nwas: %s\nnow: %s\n%s",
						j.m.name, j.k, j.p, res.Failure, j.m.wanted(j.k-1), p.answers[j.k], j.outs[j.k], res.Listing())
				}
			}
		})
	}
	parallel(work)
	var counts []string
	for _, m := range layer2Mutations {
		counts = append(counts, fmt.Sprintf("%s %d", m.name, applied[m.name]))
	}
	t.Logf("%d programs, %d mutated runs: %s", n, len(jobs), strings.Join(counts, ", "))
	for name, k := range failed {
		t.Errorf("%s: %d runs not failed", name, k)
	}
}

// layer5Mutations are the ways an answer of a layer-5 program is broken:
// its events go to the model as a layer-2 answer's do, and the kinds the
// model reports at them must be the refusal's, exactly.
var layer5Mutations = []mutation{
	// (The Go engine names no kinds in its refusals: the kinds' mutations
	// are TestMutatedTensorKinds's, on PyTorch's answers.)
	edit("done made refused as misuse", func(a *drive.Answer) bool {
		if a.Refused {
			return false
		}
		a.Refused, a.Message, a.Kinds = true, "refused by a mutation", []traces.Kind{traces.Misuse}
		return true
	}).fails("refusal", 0),
	edit("the tensor dropped", func(a *drive.Answer) bool {
		if a.Refused || a.Tensor == nil {
			return false
		}
		a.Tensor = nil
		return true
	}).fails("record", 0),
	edit("the grads dropped", func(a *drive.Answer) bool {
		if a.Grads == nil {
			return false
		}
		a.Grads = nil
		return true
	}).fails("record", 0),
	edit("a free of nothing added", func(a *drive.Answer) bool {
		a.Events = append(a.Events, traces.Event{Op: traces.OpFree, Addr: nowhere})
		return true
	}).fails("invalid-address", 0),
	edit("a free again", func(a *drive.Answer) bool {
		i := slices.IndexFunc(a.Events, func(ev traces.Event) bool { return ev.Op == traces.OpFree })
		if i < 0 || a.Refused {
			return false
		}
		a.Events = slices.Insert(a.Events, i+1, a.Events[i])
		return true
	}).fails("double-free", 0),
	edit("a free dropped", func(a *drive.Answer) bool {
		i := slices.IndexFunc(a.Events, func(ev traces.Event) bool { return ev.Op == traces.OpFree })
		if i < 0 {
			return false
		}
		a.Events = slices.Delete(a.Events, i, i+1)
		return true
	}),
	edit("a release dropped", func(a *drive.Answer) bool {
		i := slices.IndexFunc(a.Events, func(ev traces.Event) bool { return ev.Op == traces.OpRelease })
		if i < 0 {
			return false
		}
		a.Events = slices.Delete(a.Events, i, i+1)
		return true
	}),
}

// tensorProgram is a layer-5 program and the Go engine's answers to it.
type tensorProgram struct {
	calls   []drive.TensorCall
	answers [][]byte
}

// tensorTranscript returns the Go engine's answers (impldriver's, in
// PyTorch's lifetime) to calls run as a driver's first program.
func tensorTranscript(t *testing.T, calls []drive.TensorCall) [][]byte {
	t.Helper()
	var in bytes.Buffer
	fmt.Fprintf(&in, `{"id":1,"op":"reset"}`+"\n")
	for i := range calls {
		c := calls[i].AppendJSON(nil)
		fmt.Fprintf(&in, `{"id":%d,%s`+"\n", i+2, c[1:])
	}
	var out bytes.Buffer
	if err := impldriver.ServeAutograd(&in, &out, impl.Config{}, autograd.Config{Lifetime: autograd.LifetimePyTorch}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != len(calls)+2 {
		t.Fatalf("impldriver answered %d lines to %d calls and a reset", len(lines)-1, len(calls))
	}
	for i := range lines {
		lines[i] = slices.Clip(lines[i])
	}
	return lines[1:]
}

// hello5 is the hello of a driver of layer-5 programs.
var hello5 = fmt.Sprintf(`{"protocol":%q,"version":1,"layers":[5],"source":"a test's driver"}`, drive.ProtocolName)

// TestMutatedTensorAnswers: every mutation of the Go engine's answer to a
// layer-5 call is a failure.
func TestMutatedTensorAnswers(t *testing.T) {
	n := 40
	if !testing.Short() {
		n = 400
	}
	rng := rand.New(rand.NewPCG(5, 29))
	programs := make([]tensorProgram, n)
	for i := range programs {
		calls := goEngineCalls(drive.GenerateTensorProgram(rng))
		programs[i] = tensorProgram{calls, tensorTranscript(t, calls)}
	}
	run := func(p tensorProgram, answers [][]byte) (*drive.Result, error) {
		d, err := drive.StartFunc(drive.Config{CallTimeout: hangTimeout}, lineServer(hello5, func(k int, id int64) []byte { return answers[k] }))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.RunTensor(p.calls)
	}
	applied, missed := map[string]int{}, map[string]int{}
	var mu sync.Mutex
	var jobs []func()
	for pi, p := range programs {
		jobs = append(jobs, func() {
			if res, err := run(p, p.answers); err != nil || res.Failure != nil {
				mu.Lock()
				defer mu.Unlock()
				t.Errorf("program %d as the Go engine answered it: %v, %v\n%s", pi, err, res.Failure, res.Listing())
			}
		})
		for _, m := range layer5Mutations {
			from := rng.IntN(len(p.calls))
			for i := range len(p.calls) {
				k := 1 + (from+i)%len(p.calls)
				outs := m.apply(p.answers, k)
				if outs == nil {
					continue
				}
				applied[m.name]++
				jobs = append(jobs, func() {
					res, err := run(p, outs)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err != nil:
						t.Errorf("%s, answer %d of program %d: %v", m.name, k, pi, err)
					case res.Failure == nil || !m.failedAs(res.Failure, k-1):
						missed[m.name]++
						if missed[m.name] <= 2 {
							t.Errorf("%s, answer %d of program %d: failure %v, want %s\nwas: %s\nnow: %s\n%s",
								m.name, k, pi, res.Failure, m.wanted(k-1), p.answers[k], outs[k], res.Listing())
						}
					}
				})
				break
			}
		}
	}
	parallel(jobs)
	for _, m := range layer5Mutations {
		if applied[m.name] < 5 {
			t.Errorf("mutation %q applied to %d answers: too few to stand for its class", m.name, applied[m.name])
		}
	}
	t.Logf("%d programs: %v", n, applied)
}

// parallel runs jobs, many at once: a run mostly waits (for the stderr
// that settles with each failure), so that the class's thousands of runs
// take a second or two.
func parallel(jobs []func()) {
	work := make(chan func())
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				f()
			}
		}()
	}
	for _, f := range jobs {
		work <- f
	}
	close(work)
	wg.Wait()
}
