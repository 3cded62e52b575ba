package registry

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// Ptr is an address. Zero is NULL, which is never registered.
type Ptr uint64

// String formats p as trace addresses are written ("0x7f3a10").
func (p Ptr) String() string { return "0x" + strconv.FormatUint(uint64(p), 16) }

// Kind is how a buffer's memory goes back when its last name is
// unregistered: the deallocation kind Config.Free is told.
type Kind uint8

const (
	KindHeap   Kind = iota // free(): plain pointers, and buffers by default
	KindDevice             // a device free (cudaFree)
	KindMapped             // munmap
)

// String returns "heap", "device" or "mapped".
func (k Kind) String() string {
	switch k {
	case KindHeap:
		return "heap"
	case KindDevice:
		return "device"
	case KindMapped:
		return "mapped"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Block is a registered block of memory: a plain pointer, or a buffer
// under its real pointer.
type Block struct {
	Ptr  Ptr
	Size uint64
	Kind Kind
}

// DefaultShards is the number of shards when Config.Shards is 0.
const DefaultShards = 16

// Config configures a Registry. The zero Config is a registry of 16 shards
// that frees nothing and records nothing.
type Config struct {
	Shards int                // locks; 0 means DefaultShards
	Free   func(Block)        // called once per freed block, outside the locks
	Record func(traces.Event) // layer-1 events, under the shard lock (see the package comment)
	Faults []impl.Fault       // faults of impl's catalog with Engine "registry"
	_      struct{}           // name the fields: Config may grow
}

// Registry is the sharded pointer registry. Its methods are safe for
// concurrent use.
type Registry struct {
	shards []shard
	free   func(Block)
	record func(traces.Event)
	// The faults, each a bool read on the paths they corrupt.
	countOutsideLock bool
	aliasUnderflow   bool
	noRecheck        bool
}

// shard is one lock and the pointers that hash to it.
type shard struct {
	mu    sync.Mutex
	names map[Ptr]name    // registered pointers: plain, real and alias
	bufs  map[Ptr]*buffer // live buffers whose real pointer hashes here
	bytes uint64          // of the plain pointers and live buffers here
	_     [40]byte        // keep neighbouring shards' locks off one cache line
}

// name is what a registered pointer is: a plain block (buf nil) or a name
// of a buffer (its real pointer or an alias).
type name struct {
	buf  *buffer
	size uint64 // a plain block's size
}

// buffer is a live buffer. Its count is read and written under its real
// pointer's shard lock (the fault registry-count-outside-lock breaks that).
type buffer struct {
	real  Ptr
	size  uint64
	kind  Kind
	count int64 // the real pointer, if still registered, plus the aliases
}

// New returns an empty registry, or an error naming what in cfg is wrong.
func New(cfg Config) (*Registry, error) {
	n := cfg.Shards
	if n == 0 {
		n = DefaultShards
	}
	if n < 0 {
		return nil, fmt.Errorf("registry: Config.Shards %d: want a positive number, or 0 for %d", n, DefaultShards)
	}
	r := &Registry{shards: make([]shard, n), free: cfg.Free, record: cfg.Record}
	for i := range r.shards {
		r.shards[i].names = make(map[Ptr]name)
		r.shards[i].bufs = make(map[Ptr]*buffer)
	}
	for _, f := range cfg.Faults {
		info, ok := impl.LookupFault(string(f))
		switch {
		case !ok:
			return nil, fmt.Errorf("registry: Config.Faults: unknown fault %q", f)
		case info.Engine != impl.EngineRegistry:
			return nil, fmt.Errorf("registry: Config.Faults: fault %s belongs to the %s engine, not the registry", f, info.Engine)
		case f == FaultRegistryCountOutsideLock:
			r.countOutsideLock = true
		case f == FaultRegistryAliasUnderflow:
			r.aliasUnderflow = true
		case f == FaultRegistryNoRecheck:
			r.noRecheck = true
		default:
			return nil, fmt.Errorf("registry: Config.Faults: fault %s is not implemented by this registry", f)
		}
	}
	return r, nil
}

// shardOf returns the index of p's shard: a Fibonacci hash, since
// pointers are aligned and their low bits would crowd a few shards.
func (r *Registry) shardOf(p Ptr) int {
	h := uint64(p) * 0x9E3779B97F4A7C15
	return int((h >> 32) % uint64(len(r.shards)))
}

// lock2 locks shards i and j, lower index first so that two calls never
// wait on each other in a cycle; unlock2 releases them.
func (r *Registry) lock2(i, j int) {
	if i > j {
		i, j = j, i
	}
	r.shards[i].mu.Lock()
	if j != i {
		r.shards[j].mu.Lock()
	}
}

func (r *Registry) unlock2(i, j int) {
	r.shards[i].mu.Unlock()
	if j != i {
		r.shards[j].mu.Unlock()
	}
}

func (r *Registry) emit(op traces.Op, p Ptr, size uint64) {
	if r.record != nil {
		r.record(traces.Event{Op: op, Addr: traces.Addr(p), Size: size})
	}
}

// Register registers a plain block of size bytes at p, freed with
// KindHeap when p is unregistered.
func (r *Registry) Register(p Ptr, size uint64) error {
	return r.add(p, size, nil, "register")
}

// RegisterBuffer registers a buffer of size bytes at its real pointer p,
// with count 1; its memory is freed with kind when its count drops to 0.
func (r *Registry) RegisterBuffer(p Ptr, size uint64, kind Kind) error {
	return r.add(p, size, &buffer{real: p, size: size, kind: kind, count: 1}, "register_buffer")
}

func (r *Registry) add(p Ptr, size uint64, b *buffer, op string) error {
	if p == 0 {
		return &Error{op, p, ErrNull}
	}
	s := &r.shards[r.shardOf(p)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.taken(p, op); err != nil {
		return err
	}
	s.names[p] = name{buf: b, size: size}
	if b != nil {
		s.bufs[p] = b
	}
	s.bytes += size
	r.emit(traces.OpMalloc, p, size)
	return nil
}

// taken says why p cannot get a new name in s, whose lock is held.
func (s *shard) taken(p Ptr, op string) error {
	if _, ok := s.names[p]; ok {
		return &Error{op, p, ErrRegistered}
	}
	if _, ok := s.bufs[p]; ok {
		return &Error{op, p, ErrHeld}
	}
	return nil
}

// Alias registers a as a second name of the buffer whose real pointer is
// real, which must be registered: the buffer's count goes up by one.
func (r *Registry) Alias(real, a Ptr) error {
	const op = "alias"
	if real == 0 || a == 0 {
		return &Error{op, 0, ErrNull}
	}
	hi, ai := r.shardOf(real), r.shardOf(a)
	h, s := &r.shards[hi], &r.shards[ai]
	r.lock2(hi, ai)
	n, ok := h.names[real]
	switch {
	case !ok:
		r.unlock2(hi, ai)
		return &Error{op, real, ErrNotRegistered}
	case n.buf == nil || n.buf.real != real:
		r.unlock2(hi, ai)
		return &Error{op, real, ErrNotBuffer}
	}
	if err := s.taken(a, op); err != nil {
		r.unlock2(hi, ai)
		return err
	}
	b := n.buf
	s.names[a] = name{buf: b}
	if !r.countOutsideLock {
		b.count++
		r.unlock2(hi, ai)
		return nil
	}
	r.unlock2(hi, ai)
	r.racyAdd(b, +1)
	return nil
}

// racyAdd is the fault registry-count-outside-lock: the count is read and
// written back after the locks are released, with a yield in between, so
// that another call's update in that window is lost, as in SCL-Core's
// load-then-store on an atomic count. Its result is the count it wrote.
// The accesses are atomic, so the race detector is silent: only the
// linearizability check can see the lost update.
func (r *Registry) racyAdd(b *buffer, d int64) int64 {
	c := atomicLoad(&b.count)
	runtime.Gosched()
	atomicStore(&b.count, c+d)
	return c + d
}

// Unregister removes p. A plain pointer is freed at once; a buffer's real
// pointer or alias drops the buffer's count, and the call that brings it
// to 0 frees the buffer with its kind. The Block returned is what this
// call freed; its Ptr is 0 when it freed nothing.
func (r *Registry) Unregister(p Ptr) (Block, error) {
	const op = "unregister"
	if p == 0 {
		return Block{}, &Error{op, p, ErrNull}
	}
	for {
		si := r.shardOf(p)
		s := &r.shards[si]
		s.mu.Lock()
		n, ok := s.names[p]
		if !ok {
			s.mu.Unlock()
			return Block{}, &Error{op, p, ErrNotRegistered}
		}
		if n.buf == nil {
			delete(s.names, p)
			s.bytes -= n.size
			r.emit(traces.OpFree, p, 0)
			s.mu.Unlock()
			blk := Block{p, n.size, KindHeap}
			r.freed(blk)
			return blk, nil
		}
		b := n.buf
		hi := r.shardOf(b.real)
		if hi != si {
			// The count lives in the real pointer's shard: take both
			// locks in order and look again, since p may have changed
			// hands while neither was held.
			s.mu.Unlock()
			r.lock2(si, hi)
			if n2, ok := s.names[p]; !r.noRecheck && (!ok || n2.buf != b) {
				r.unlock2(si, hi)
				continue
			}
		}
		if !(r.aliasUnderflow && p != b.real) {
			delete(s.names, p)
		}
		var blk Block
		if !r.countOutsideLock {
			b.count--
			if b.count == 0 {
				blk = r.drop(b)
			}
			r.unlock2(si, hi)
		} else {
			r.unlock2(si, hi)
			if r.racyAdd(b, -1) == 0 {
				h := &r.shards[hi]
				h.mu.Lock()
				blk = r.drop(b)
				h.mu.Unlock()
			}
		}
		r.freed(blk)
		return blk, nil
	}
}

// drop forgets the live buffer b, whose shard's lock is held, and returns
// it as the block to free.
func (r *Registry) drop(b *buffer) Block {
	h := &r.shards[r.shardOf(b.real)]
	delete(h.bufs, b.real)
	h.bytes -= b.size
	r.emit(traces.OpFree, b.real, 0)
	return Block{b.real, b.size, b.kind}
}

func (r *Registry) freed(b Block) {
	if b.Ptr != 0 && r.free != nil {
		r.free(b)
	}
}
