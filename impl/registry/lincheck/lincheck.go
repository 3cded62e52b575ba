package lincheck

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry"
	"github.com/tlcheck/tlcheck/internal/watchdog"
	"github.com/tlcheck/tlcheck/traces"
)

// Config is a workload: how many goroutines, how many calls each, from
// which seed, against a registry with which faults.
type Config struct {
	Clients int           // goroutines calling at once; 0 means 8
	Ops     int           // calls per goroutine and history; 0 means 24
	Shards  int           // the registry's shards; 0 means its default
	Seed    uint64        // the calls are drawn from it; a history's own seed is Seed + its number
	Faults  []impl.Fault  // registry faults to switch on
	Timeout time.Duration // porcupine's time to check one history; 0 means 10s
	// Stall is how long a history may go without any call returning
	// before Run gives it up as deadlocked (ErrStalled); 0 means 5s.
	Stall time.Duration
	_     struct{}
}

// ErrStalled is the error of a history in which no call returned for
// Config.Stall: the registry deadlocked, most likely. The error's text
// holds every goroutine's stack. The stuck goroutines cannot be stopped;
// they stay blocked for the life of the process.
var ErrStalled = errors.New("no call returned")

func (c Config) withDefaults() Config {
	if c.Clients == 0 {
		c.Clients = 8
	}
	if c.Ops == 0 {
		c.Ops = 24
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Stall == 0 {
		c.Stall = 5 * time.Second
	}
	return c
}

// Verdict is a history's check: porcupine's Ok, Illegal or Unknown (the
// check ran out of Config.Timeout).
type Verdict = porcupine.CheckResult

// The verdicts, porcupine's.
const (
	Ok      = porcupine.Ok
	Illegal = porcupine.Illegal
	Unknown = porcupine.Unknown
)

// Result is one history and its verdict.
type Result struct {
	Verdict Verdict
	Seed    uint64                // the seed that drew the calls
	History []porcupine.Operation // Input and Output hold Input and Output
	info    porcupine.LinearizationInfo
}

// Visualize writes porcupine's HTML view of the history: each goroutine's
// calls on a time line, and the longest orders the model accepts.
func (r Result) Visualize(w io.Writer) error {
	return porcupine.Visualize(Model(), r.info, w)
}

// String describes the history, one call a line, in invocation order.
func (r Result) String() string {
	s := fmt.Sprintf("%s: %d calls (seed %d)\n", r.Verdict, len(r.History), r.Seed)
	for _, op := range r.History {
		s += fmt.Sprintf("  client %d [%d,%d] %s\n", op.ClientId, op.Call, op.Return, describe(op.Input.(Input), op.Output.(Output)))
	}
	return s
}

// Run runs one history of the workload drawn from seed and checks it.
// The error is a registry that cannot be made from cfg, or ErrStalled.
func Run(cfg Config, seed uint64) (Result, error) {
	cfg = cfg.withDefaults()
	// The recorder runs under a shard's lock; yielding there lets the
	// other goroutines run while the lock is held, so that they pile up
	// in the windows between a call's locks, where its races are.
	reg, err := registry.New(registry.Config{Shards: cfg.Shards, Faults: cfg.Faults, Record: func(traces.Event) { runtime.Gosched() }})
	if err != nil {
		return Result{}, fmt.Errorf("lincheck: %w", err)
	}
	var clock atomic.Int64 // one clock for every goroutine: real-time order
	stalled := make(chan string, 1)
	dog := watchdog.Start(cfg.Stall, func(stacks string) { stalled <- stacks })
	hist := make([][]porcupine.Operation, cfg.Clients)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for c := range cfg.Clients {
		calls := draw(seed, c, cfg.Ops)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start // every goroutine starts at once, so calls overlap
			ops := make([]porcupine.Operation, len(calls))
			for k, in := range calls {
				call := clock.Add(1)
				out := apply(reg, in)
				ops[k] = porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: clock.Add(1)}
				dog.Pet()
			}
			hist[c] = ops
		}()
	}
	close(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		dog.Stop()
	case stacks := <-stalled:
		return Result{}, fmt.Errorf("lincheck: history of seed %d: %w for %v (a deadlock?); every goroutine's stack:\n\n%s", seed, ErrStalled, cfg.Stall, stacks)
	}
	var all []porcupine.Operation
	for _, h := range hist {
		all = append(all, h...)
	}
	v, info := porcupine.CheckOperationsVerbose(Model(), all, cfg.Timeout)
	return Result{Verdict: v, Seed: seed, History: all, info: info}, nil
}

// Hunt runs histories, seeds cfg.Seed, cfg.Seed+1, ..., while more(n)
// says to go on after n of them, and returns the first that is not
// linearizable (Illegal), or the last one run; n is how many ran.
func Hunt(cfg Config, more func(n int) bool) (r Result, n int, err error) {
	for n = 0; n == 0 || more(n); {
		r, err = Run(cfg, cfg.Seed+uint64(n))
		n++
		if err != nil || r.Verdict == porcupine.Illegal {
			return r, n, err
		}
	}
	return r, n, nil
}

// Shrink looks for a shorter history that is still not linearizable, as
// a counterexample to read: workloads of fewer goroutines and calls, the
// smallest first, each tried on up to tries seeds from cfg.Seed. A
// concurrent history cannot be replayed call by call, so this is a search,
// not a reduction of r. It returns the first one it finds, or r (at once
// if a history stalls).
func Shrink(cfg Config, r Result, tries int) Result {
	type size struct{ clients, ops int }
	var sizes []size
	for c := 1; c <= 4; c++ {
		for _, o := range []int{1, 2, 3, 4, 6, 8, 12, 16} {
			if c*o < len(r.History) {
				sizes = append(sizes, size{c, o})
			}
		}
	}
	slices.SortStableFunc(sizes, func(a, b size) int { return a.clients*a.ops - b.clients*b.ops })
	for _, sz := range sizes {
		small := cfg
		small.Clients, small.Ops = sz.clients, sz.ops
		for k := range tries {
			got, err := Run(small, cfg.Seed+uint64(k))
			if errors.Is(err, ErrStalled) {
				return r // a deadlock: every later try would wait Config.Stall too
			}
			if err == nil && got.Verdict == porcupine.Illegal {
				return got
			}
		}
	}
	return r
}

// draw returns client c's calls for the history of seed: mostly buffer
// calls, which are what goroutines contend on, with queries between.
func draw(seed uint64, c, n int) []Input {
	rng := rand.New(rand.NewPCG(seed, uint64(c)))
	calls := make([]Input, n)
	for k := range calls {
		in := Input{Slot: rng.IntN(Addrs), Real: rng.IntN(Addrs)}
		switch p := rng.IntN(100); {
		case p < 20:
			in.Op, in.Kind = OpRegisterBuffer, registry.Kind(rng.IntN(3))
		case p < 45:
			in.Op = OpAlias
		case p < 75:
			in.Op = OpUnregister
		case p < 80:
			in.Op = OpRegister
		case p < 88:
			in.Op = OpIsRegistered
		default:
			in.Op = OpTotalBytes + OpKind(rng.IntN(3))
		}
		calls[k] = in
	}
	return calls
}

// apply makes the call in on reg and returns what it gave.
func apply(reg *registry.Registry, in Input) Output {
	p := Addr(in.Slot)
	switch in.Op {
	case OpRegister:
		return Output{Err: Code(reg.Register(p, Size(in.Slot)))}
	case OpRegisterBuffer:
		return Output{Err: Code(reg.RegisterBuffer(p, Size(in.Slot), in.Kind))}
	case OpAlias:
		return Output{Err: Code(reg.Alias(Addr(in.Real), p))}
	case OpUnregister:
		b, err := reg.Unregister(p)
		return Output{Err: Code(err), Freed: b}
	case OpIsRegistered:
		if reg.IsRegistered(p) {
			return Output{Value: 1}
		}
		return Output{}
	case OpTotalBytes:
		return Output{Value: reg.TotalBytes()}
	case OpPointers:
		return Output{Value: uint64(reg.Pointers())}
	case OpBuffers:
		return Output{Value: uint64(reg.Buffers())}
	}
	return Output{Err: ErrOther}
}
