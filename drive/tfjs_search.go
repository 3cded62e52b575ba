package drive

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// tfjsSeedStream is the second word of the PCG of tfjs searches.
const tfjsSeedStream = 0x74666a73

// TfjsFinding is a failure of a tfjs program, shrunk.
type TfjsFinding struct {
	Result   *TfjsResult // the shrunk program's run
	Seed     uint64
	Index    int // the failing program's number in the search, from 1
	Steps    int // its calls before shrinking
	Shrinks  int // the runs shrinking made
	Duration time.Duration
}

// SearchTfjs runs generated tfjs programs (GenerateTfjsProgram with gen)
// on the driver, two in flight, until opts.More says stop or one fails,
// and shrinks the failure (ShrinkTfjs). It returns the finding (nil for a
// clean search) and the number of programs judged; it stops at its first
// finding (opts.Restart and opts.Found are not used).
func (r *Runner) SearchTfjs(opts Options, gen TfjsGenOptions) (*TfjsFinding, int, error) {
	opts.Restart, opts.Found = false, nil
	found, judged, err := search(r, opts, r.tfjsLanguage(gen))
	if err != nil || len(found) == 0 {
		return nil, judged, err
	}
	return tfjsFinding(found[0]), judged, nil
}

// tfjsLanguage is tfjs programs as SearchTfjs and ShrinkTfjs send them:
// program k of a search is TfjsProgram's, shrunk by cutAfter and
// shrinkTfjs's passes, towards the same failure only.
func (r *Runner) tfjsLanguage(gen TfjsGenOptions) programLanguage[[]TfjsCall, *TfjsResult] {
	return programLanguage[[]TfjsCall, *TfjsResult]{
		nth:    func(seed uint64, k int) []TfjsCall { return TfjsProgram(seed, k, gen) },
		stream: r.StreamTfjs,
		run: func(c []TfjsCall) ([]TfjsCall, *TfjsResult, error) {
			res, err := r.RunTfjs(c)
			return c, res, err
		},
		cut: func(calls []TfjsCall, call int) ([]TfjsCall, bool) {
			c := cutAfter(calls, call)
			return c, c != nil && CheckTfjsProgram(c) == nil
		},
		passes: func(c []TfjsCall, fails func([]TfjsCall) ([]TfjsCall, bool), first bool) []TfjsCall {
			if !first {
				return c
			}
			return shrinkTfjs(c, func(c []TfjsCall) bool {
				if CheckTfjsProgram(c) != nil {
					return false
				}
				_, ok := fails(c)
				return ok
			})
		},
		size:         func(c []TfjsCall) int { return len(c) },
		keep:         func(*Finding, []TfjsCall) {},
		unreproduced: true,
	}
}

// tfjsFinding is f, a finding of tfjsLanguage, as a TfjsFinding.
func tfjsFinding(f *Finding) *TfjsFinding {
	return &TfjsFinding{Result: f.tfjs, Seed: f.Seed, Index: f.Index, Steps: f.Steps, Shrinks: f.Shrinks, Duration: f.Duration}
}

// TfjsProgram is program k (from 1) of the search of seed: each program
// has a generator of its own, so that a finding's seed and index name its
// program, and parallel searches (SearchTfjsParallel) run the programs a
// search of one driver does.
func TfjsProgram(seed uint64, k int, gen TfjsGenOptions) []TfjsCall {
	return GenerateTfjsProgram(rand.New(rand.NewPCG(seed, tfjsSeedStream+uint64(k))), gen)
}

// SearchTfjsParallel is SearchTfjs on workers drivers at once, each
// started from cfg: worker w runs programs w+1, w+1+workers, ... of the
// seed (TfjsProgram), two in flight, until opts.More says stop (of the
// programs handed out) or a program fails; the failure is shrunk on its
// worker's driver. Where there are cores for them, the drivers' throughput
// adds up. It returns the finding (nil for a clean search) and the
// programs judged.
func SearchTfjsParallel(cfg Config, workers int, opts Options, gen TfjsGenOptions) (*TfjsFinding, int, error) {
	more := opts.More
	if more == nil {
		more = func(n int) bool { return n < 1000 }
	}
	runners := make([]*Runner, max(workers, 1))
	defer func() {
		for _, r := range runners {
			if r != nil {
				r.Close()
			}
		}
	}()
	for i := range runners {
		r, err := NewRunner(cfg)
		if err != nil {
			return nil, 0, err
		}
		runners[i] = r
	}
	start := time.Now()
	var (
		mu      sync.Mutex
		handed  int
		judged  int
		stopped bool
		first   struct {
			calls   []TfjsCall
			failure *Failure
			index   int
			r       *Runner
		}
		firstErr error
		wg       sync.WaitGroup
	)
	for _, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			index := map[*TfjsCall]int{}
			err := r.StreamTfjs(func() ([]TfjsCall, bool) {
				mu.Lock()
				defer mu.Unlock()
				if stopped || !more(handed) {
					return nil, false
				}
				handed++
				calls := TfjsProgram(opts.Seed, handed, gen)
				index[&calls[0]] = handed
				return calls, true
			}, func(calls []TfjsCall, res *TfjsResult) bool {
				mu.Lock()
				defer mu.Unlock()
				judged++
				k := index[&calls[0]]
				delete(index, &calls[0])
				if res.Failure == nil {
					return !stopped
				}
				if first.failure == nil || k < first.index {
					first.calls, first.failure, first.index, first.r = calls, res.Failure, k, r
				}
				stopped = true
				return false
			})
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				stopped = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil || first.failure == nil {
		return nil, judged, firstErr
	}
	took := time.Since(start)
	f, err := first.r.ShrinkTfjs(first.calls, first.failure, opts)
	if err != nil {
		return nil, judged, err
	}
	f.Seed, f.Index, f.Duration = opts.Seed, first.index, took
	return f, judged, nil
}

// StreamTfjs runs the tfjs programs next gives and hands each one's run
// to got, in order, until next says there are no more or got returns
// false. It keeps two programs in flight, as Stream does: the next is sent
// while the driver answers the one before. A program whose run broke the
// driver while the next was in flight is run again alone, on the driver
// started again, so that a crash is blamed on the program that caused it.
func (r *Runner) StreamTfjs(next func() ([]TfjsCall, bool), got func(calls []TfjsCall, res *TfjsResult) bool) error {
	return streamRuns(r, next,
		func(calls []TfjsCall) (*batch, error) { return r.d.sendTfjs(calls) },
		func(calls []TfjsCall, b *batch) *TfjsResult { return r.d.receiveTfjs(b, calls) },
		r.RunTfjs, got)
}

// ShrinkTfjs returns the smallest tfjs program it finds that fails on the
// driver the way calls did with failure (the same kind, at the same op):
// the calls after the failing one go, then calls with every call that uses
// what they made, tidies unwrapped, ops replaced by tensors made from
// values (so that what they took may go), and runs of calls, ever
// shorter; every
// candidate is a well-formed program; the handles are numbered again in
// the order made. It is shrink's driver, as Shrink's: within
// opts.ShrinkRuns and opts.ShrinkTime, a hang shrunk at a shortened call
// timeout (hangTimeout), the smallest run once more for the finding.
func (r *Runner) ShrinkTfjs(calls []TfjsCall, failure *Failure, opts Options) (*TfjsFinding, error) {
	f, err := shrink(r, calls, failure, opts, r.tfjsLanguage(TfjsGenOptions{}))
	if err != nil {
		return nil, err
	}
	return tfjsFinding(f), nil
}

// shrinkTfjs is ShrinkTfjs's passes over calls, with fails judging each
// candidate (every one well-formed), round after round while one makes
// the program smaller; the handles of the smallest are numbered again.
func shrinkTfjs(calls []TfjsCall, fails func([]TfjsCall) bool) []TfjsCall {
	best := calls
	for progress := true; progress; {
		progress = false
		try := func(c []TfjsCall) {
			if len(c) < len(best) && fails(c) {
				best, progress = c, true
			}
		}
		for i := len(best) - 2; i >= 0; i-- {
			if i < len(best)-1 {
				try(withoutDependents(best, i))
			}
		}
		for i := 0; i < len(best)-1; i++ {
			if best[i].Op == TfjsTidy {
				try(unwrapTidy(best, i))
			}
		}
		for i := 0; i < len(best)-1; i++ {
			if c := asPlainTensor(best, i); c != nil && fails(c) {
				best, progress = c, true
			}
		}
		for size := (len(best) - 1) / 2; size >= 1; size /= 2 {
			for i := 0; i+size < len(best); i++ {
				try(slices.Concat(best[:i], best[i+size:]))
			}
		}
	}
	return renumberTfjs(best)
}

// cutAfter returns calls up to the failing one, its tidies closed by
// throws (which return nothing), and end; nil if that is no shorter.
func cutAfter(calls []TfjsCall, failed int) []TfjsCall {
	if failed+1 >= len(calls)-1 {
		return nil
	}
	c := slices.Clone(calls[:failed+1])
	depth := 0
	for _, x := range c {
		switch x.Op {
		case TfjsTidy:
			depth++
		case TfjsTidyEnd, TfjsTidyThrow:
			depth--
		}
	}
	for range depth {
		c = append(c, TfjsCall{Op: TfjsTidyThrow})
	}
	return append(c, TfjsCall{Op: TfjsEnd})
}

// withoutDependents drops call i and every later call that uses what it
// made, or what those made.
func withoutDependents(calls []TfjsCall, i int) []TfjsCall {
	gone := map[int]bool{}
	for _, h := range calls[i].made() {
		gone[h] = true
	}
	out := slices.Clone(calls[:i])
	for _, c := range calls[i+1:] {
		if slices.ContainsFunc(c.uses(), func(h int) bool { return gone[h] }) {
			for _, h := range c.made() {
				gone[h] = true
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// asPlainTensor replaces call i, an op that makes one tensor, by a
// tf.tensor of zeros of its shape, so that what it took may go; nil if
// call i is no such op.
func asPlainTensor(calls []TfjsCall, i int) []TfjsCall {
	c := calls[i]
	if c.Handle == 0 || c.Op == TfjsTensor || c.Op == TfjsVariable || c.Op == TfjsOptimizer {
		return nil
	}
	var st tfjsState
	for j := range i + 1 {
		if st.step(&calls[j]) != nil {
			return nil
		}
	}
	shape := st.things[c.Handle].shape
	n := 1
	for _, d := range shape {
		n *= d
	}
	out := slices.Clone(calls)
	out[i] = TfjsCall{Op: TfjsTensor, Handle: c.Handle, Shape: slices.Clone(shape), Values: make([]float64, n)}
	return out
}

// unwrapTidy drops the tidy at i and the call that ends it, keeping the
// calls between.
func unwrapTidy(calls []TfjsCall, i int) []TfjsCall {
	depth := 0
	for j := i; j < len(calls); j++ {
		switch calls[j].Op {
		case TfjsTidy:
			depth++
		case TfjsTidyEnd, TfjsTidyThrow:
			depth--
			if depth == 0 {
				return slices.Concat(calls[:i], calls[i+1:j], calls[j+1:])
			}
		}
	}
	return nil
}

// renumberTfjs numbers the handles again from 1 in the order made.
func renumberTfjs(calls []TfjsCall) []TfjsCall {
	to := map[int]int{}
	n := 0
	out := make([]TfjsCall, len(calls))
	re := func(h int) int {
		if h == 0 {
			return 0
		}
		if _, ok := to[h]; !ok {
			n++
			to[h] = n
		}
		return to[h]
	}
	reAll := func(hs []int) []int {
		if hs == nil {
			return nil
		}
		o := make([]int, len(hs))
		for i, h := range hs {
			o[i] = re(h)
		}
		return o
	}
	for i, c := range calls {
		for _, h := range c.made() {
			re(h)
		}
		c.Handle, c.A, c.B, c.Target = re(c.Handle), re(c.A), re(c.B), re(c.Target)
		c.Handles, c.Targets, c.Vars, c.Result = reAll(c.Handles), reAll(c.Targets), reAll(c.Vars), reAll(c.Result)
		out[i] = c
	}
	return out
}

// Write writes the finding as NAME.calls.jsonl in dir, with comments that
// say what failed and how to replay it with command, and returns its path.
func (f *TfjsFinding) Write(dir, name, command string) (string, error) {
	fl := f.Result.Failure
	var b strings.Builder
	comments := []string{
		fmt.Sprintf("tlcheck-drive counterexample (tfjs program): %s at call %d (%s)", fl.What, fl.Call, f.Result.Calls[min(fl.Call, len(f.Result.Calls)-1)].Op),
		fl.Message,
		fmt.Sprintf("seed %d, program %d, shrunk from %d calls in %d runs", f.Seed, f.Index, f.Steps, f.Shrinks),
		"replay: go test ./drive -run TestTfjsReplay, or send it to: " + command,
	}
	if err := WriteTfjsCalls(&b, f.Result.Calls, comments...); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".calls.jsonl")
	if err := atomicfile.Replace(path, []byte(b.String())); err != nil {
		return "", fmt.Errorf("drive: writing %s: %w", path, err)
	}
	return path, nil
}
