package cudarec

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// Mismatch is one thing impl/gpu did otherwise than the GPU at a step.
type Mismatch struct {
	What string // "malloc", "memory_stats()[KEY]", "segment ADDR block I state", ...
	Real string // what PyTorch on the GPU did
	Sim  string // what impl/gpu did
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s: cuda %s, impl/gpu %s", m.What, m.Real, m.Sim)
}

// Result is a program replayed on impl/gpu.
type Result struct {
	Program string // the program's name
	Steps   int    // steps compared: all of them, or up to and including the first that differs
	// Step is the index of the first step that differs, Mismatches what
	// differs there (later steps are not compared: they inherit the
	// difference); Mismatches is empty when every step agrees.
	Step       int
	Mismatches []Mismatch
}

// Agrees reports whether every step agreed.
func (r Result) Agrees() bool { return len(r.Mismatches) == 0 }

// CachingFaults are the faults of impl.Catalog that change the caching
// allocator (the others of its engine are the persistent pool's).
var CachingFaults = []impl.Fault{gpu.FaultPoolSplitRemainderLost, gpu.FaultPoolFreeNoMerge,
	gpu.FaultPoolStatsDrift, gpu.FaultPoolWorstFit, gpu.FaultPoolReleaseWholeCache}

// Replay runs p on a fresh impl/gpu caching allocator configured as h's
// process was (MaxSplitSize) with p's capacity, each segment placed at the
// address CUDA gave it, each stream's work completed where the GPU's was
// (a stream synchronized, or drained by cudaFree), and compares, after
// every step, what the malloc returned or refused, memory_stats() and
// memory_snapshot(). Faults, if any, are switched on in the allocator: a
// fault of CachingFaults should make some program differ.
func Replay(h *Header, p *Program, faults ...impl.Fault) Result {
	res := Result{Program: p.Name}
	r, err := newReplayer(h, p, faults)
	if err != nil {
		res.Mismatches = []Mismatch{{What: "configuration", Real: fmt.Sprintf("max_split_size %d accepted", h.MaxSplitSize), Sim: err.Error()}}
		return res
	}
	for i := range p.Steps {
		res.Steps = i + 1
		if ms := r.step(&p.Steps[i]); len(ms) > 0 {
			res.Step, res.Mismatches = i, ms
			return res
		}
	}
	return res
}

type replayer struct {
	h       *Header
	c       *gpu.CachingAllocator
	addrs   map[int]traces.Addr // the program's live tensors: malloc id -> impl/gpu's address
	place   []traces.Addr       // where CUDA put the segment this step made
	keyAt   map[string]int
	devAllc int64 // num_device_alloc before the step
}

func newReplayer(h *Header, p *Program, faults []impl.Fault) (*replayer, error) {
	r := &replayer{h: h, addrs: map[int]traces.Addr{}, keyAt: map[string]int{}}
	for i, k := range h.Keys {
		r.keyAt[k] = i
	}
	dev := gpu.NewDevice(p.Cap, nil)
	stray := traces.Addr(1) << 62 // a segment CUDA did not make: the step will differ anyway
	dev.PlaceWith(func(n uint64) traces.Addr {
		if len(r.place) > 0 {
			a := r.place[0]
			r.place = r.place[1:]
			return a
		}
		a := stray
		stray += traces.Addr(n+(1<<30)) &^ 511
		return a
	})
	opts := gpu.CachingOptions{Faults: faults}
	if h.MaxSplitSize > 0 {
		opts.MaxSplitSize = uint64(h.MaxSplitSize)
	}
	c, err := gpu.NewCaching(dev, opts)
	r.c = c
	return r, err
}

// stat returns the recorded value of key at a step.
func (r *replayer) stat(s *Step, key string) (int64, bool) {
	i, ok := r.keyAt[key]
	if !ok || s.Stats[i] == nil {
		return 0, false
	}
	return *s.Stats[i], true
}

func (r *replayer) step(s *Step) []Mismatch {
	for _, st := range s.Before {
		r.c.Synchronize(gpu.Stream(st))
	}
	// A new segment starts with the block the malloc returned.
	r.place = r.place[:0]
	if n, ok := r.stat(s, "num_device_alloc"); ok && n > r.devAllc && s.Ptr != 0 {
		r.place = append(r.place, traces.Addr(s.Ptr))
	}
	r.devAllc, _ = r.stat(s, "num_device_alloc")
	var ms []Mismatch
	switch s.Op {
	case "malloc":
		ms = append(ms, r.malloc(s)...)
	case "free":
		if a, ok := r.addrs[s.ID]; ok != !s.Noop {
			ms = append(ms, Mismatch{"free", tensorState(!s.Noop), tensorState(ok)})
		} else if ok {
			delete(r.addrs, s.ID)
			if err := r.c.Free(a); err != nil {
				ms = append(ms, Mismatch{"free", "freed", err.Error()})
			}
		}
	case "record":
		if a, ok := r.addrs[s.ID]; ok != !s.Noop {
			ms = append(ms, Mismatch{"record_stream", tensorState(!s.Noop), tensorState(ok)})
		} else if ok && a != 0 { // an empty tensor has no block to record
			if err := r.c.RecordStream(a, gpu.Stream(s.Stream)); err != nil {
				ms = append(ms, Mismatch{"record_stream", "recorded", err.Error()})
			}
		}
	case "sync":
		r.c.Synchronize(gpu.Stream(s.Stream))
	case "empty":
		r.c.EmptyCache()
	}
	for _, st := range s.Done {
		r.c.Synchronize(gpu.Stream(st))
	}
	ms = append(ms, r.compareStats(s)...)
	ms = append(ms, compareSegments(s.Segs, r.c.Snapshot())...)
	for _, t := range s.Tiling {
		ms = append(ms, Mismatch{"memory_snapshot() tiling", t, "-"})
	}
	return ms
}

func tensorState(live bool) string {
	if live {
		return "a live tensor"
	}
	return "no tensor (its malloc failed)"
}

var (
	triedRe = regexp.MustCompile(`Tried to allocate (.+?)\.( |$)`)
	heldRe  = regexp.MustCompile(`Of the allocated memory (.+?) is allocated by (?:PyTorch|the allocator), and (.+?) is reserved`)
)

func (r *replayer) malloc(s *Step) []Mismatch {
	a, err := r.c.Malloc(s.Size, gpu.Stream(s.Stream))
	what := fmt.Sprintf("malloc(%d, stream %d)", s.Size, s.Stream)
	var oom *gpu.OutOfMemoryError
	switch {
	case s.Error == "" && err == nil:
		r.addrs[s.ID] = a
		if uint64(a) != s.Ptr {
			return []Mismatch{{what, fmt.Sprintf("%#x", s.Ptr), fmt.Sprintf("%#x", uint64(a))}}
		}
		return nil
	case s.Error == "oom" && errors.As(err, &oom):
		var ms []Mismatch
		if rt, st := submatch(triedRe, s.Msg), submatch(triedRe, err.Error()); !slices.Equal(rt, st) {
			ms = append(ms, Mismatch{what + " out of memory: tried to allocate", fmt.Sprint(rt), fmt.Sprint(st)})
		}
		if rh, sh := submatch(heldRe, s.Msg), submatch(heldRe, err.Error()); !slices.Equal(rh, sh) {
			ms = append(ms, Mismatch{what + " out of memory: allocated, reserved but unallocated", fmt.Sprint(rh), fmt.Sprint(sh)})
		}
		return ms
	case s.Error == "":
		return []Mismatch{{what, fmt.Sprintf("%#x", s.Ptr), err.Error()}}
	}
	got := "returned " + fmt.Sprintf("%#x", uint64(a))
	if err != nil {
		got = err.Error()
	}
	return []Mismatch{{what, s.Error + ": " + s.Msg, got}}
}

func submatch(re *regexp.Regexp, s string) []string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	return m[1:]
}

func (r *replayer) compareStats(s *Step) []Mismatch {
	sim := r.c.Stats().Map()
	var ms []Mismatch
	for i, k := range r.h.Keys {
		v, ok := sim[k]
		if !ok || s.Stats[i] == nil {
			continue
		}
		if *s.Stats[i] != v {
			ms = append(ms, Mismatch{"memory_stats()[" + k + "]", fmt.Sprint(*s.Stats[i]), fmt.Sprint(v)})
		}
	}
	return ms
}

func compareSegments(real []Segment, sim []gpu.SegmentInfo) []Mismatch {
	var ms []Mismatch
	if len(real) != len(sim) {
		return []Mismatch{{"memory_snapshot() segments", describe(real), describeSim(sim)}}
	}
	for i, rs := range real {
		ss := sim[i]
		name := fmt.Sprintf("segment %#x", rs.Addr)
		if rs.Addr != uint64(ss.Addr) || rs.Size != ss.Size || rs.Small != ss.Small || rs.Stream != int(ss.Stream) || rs.Expandable {
			ms = append(ms, Mismatch{name, fmt.Sprintf("%#x %d bytes small=%v stream %d expandable=%v", rs.Addr, rs.Size, rs.Small, rs.Stream, rs.Expandable),
				fmt.Sprintf("%#x %d bytes small=%v stream %d", uint64(ss.Addr), ss.Size, ss.Small, ss.Stream)})
			continue
		}
		if len(rs.Blocks) != len(ss.Blocks) {
			ms = append(ms, Mismatch{name + " blocks", describeBlocks(rs.Blocks), describeSimBlocks(ss.Blocks)})
			continue
		}
		for j, rb := range rs.Blocks {
			sb := ss.Blocks[j]
			if rb.Size != sb.Size || rb.State != sb.State {
				ms = append(ms, Mismatch{fmt.Sprintf("%s block %d", name, j), fmt.Sprintf("%d %s", rb.Size, rb.State), fmt.Sprintf("%d %s", sb.Size, sb.State)})
				continue
			}
			if rb.Requested != int64(sb.Requested) {
				ms = append(ms, Mismatch{fmt.Sprintf("%s block %d requested_size", name, j), fmt.Sprint(rb.Requested), fmt.Sprint(sb.Requested)})
			}
		}
	}
	return ms
}

func describe(segs []Segment) string {
	out := ""
	for _, s := range segs {
		out += fmt.Sprintf("[%#x %d %s] ", s.Addr, s.Size, describeBlocks(s.Blocks))
	}
	return out
}

func describeSim(segs []gpu.SegmentInfo) string {
	out := ""
	for _, s := range segs {
		out += fmt.Sprintf("[%#x %d %s] ", uint64(s.Addr), s.Size, describeSimBlocks(s.Blocks))
	}
	return out
}

func describeBlocks(bs []Block) string {
	out := ""
	for _, b := range bs {
		out += fmt.Sprintf("%d:%s ", b.Size, b.State[:1])
	}
	return out
}

func describeSimBlocks(bs []gpu.BlockInfo) string {
	out := ""
	for _, b := range bs {
		out += fmt.Sprintf("%d:%s ", b.Size, b.State[:1])
	}
	return out
}
