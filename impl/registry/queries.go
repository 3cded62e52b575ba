package registry

import (
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// lockAll takes every shard's lock, in index order; unlockAll releases
// them. A query that holds them all sees one instant of the registry.
func (r *Registry) lockAll() {
	for i := range r.shards {
		r.shards[i].mu.Lock()
	}
}

func (r *Registry) unlockAll() {
	for i := range r.shards {
		r.shards[i].mu.Unlock()
	}
}

// IsRegistered reports whether p is registered (plain, real or alias).
func (r *Registry) IsRegistered(p Ptr) bool {
	s := &r.shards[r.shardOf(p)]
	s.mu.Lock()
	_, ok := s.names[p]
	s.mu.Unlock()
	return ok
}

// TotalBytes is the size of every plain block and live buffer.
func (r *Registry) TotalBytes() uint64 {
	r.lockAll()
	defer r.unlockAll()
	var n uint64
	for i := range r.shards {
		n += r.shards[i].bytes
	}
	return n
}

// Pointers is the number of registered pointers: plain, real and alias.
func (r *Registry) Pointers() int {
	r.lockAll()
	defer r.unlockAll()
	n := 0
	for i := range r.shards {
		n += len(r.shards[i].names)
	}
	return n
}

// Buffers is the number of live buffers (those with a count above 0).
func (r *Registry) Buffers() int {
	r.lockAll()
	defer r.unlockAll()
	n := 0
	for i := range r.shards {
		n += len(r.shards[i].bufs)
	}
	return n
}

// Leak is a block still registered: the leak report's line.
type Leak struct {
	Block
	Aliases []Ptr // a buffer's aliases still registered, in address order
	Real    bool  // whether a buffer's real pointer is still registered (always true for a plain block)
}

// Leaks reports every block still registered, in address order: plain
// blocks and live buffers, with the names that hold each buffer.
func (r *Registry) Leaks() []Leak {
	r.lockAll()
	defer r.unlockAll()
	return r.leaks()
}

// leaks is Leaks with every lock held.
func (r *Registry) leaks() []Leak {
	var out []Leak
	idx := map[*buffer]int{}
	for i := range r.shards {
		for p, b := range r.shards[i].bufs {
			idx[b] = len(out)
			out = append(out, Leak{Block: Block{p, b.size, b.kind}})
		}
	}
	for i := range r.shards {
		for p, n := range r.shards[i].names {
			if n.buf == nil {
				out = append(out, Leak{Block: Block{p, n.size, KindHeap}, Real: true})
				continue
			}
			j, ok := idx[n.buf]
			if !ok {
				// A name of a buffer already freed: only a fault leaves
				// one, and the report shows it rather than hide it.
				b := n.buf
				j = len(out)
				idx[b] = j
				out = append(out, Leak{Block: Block{b.real, b.size, b.kind}})
			}
			if p == n.buf.real {
				out[j].Real = true
			} else {
				out[j].Aliases = append(out[j].Aliases, p)
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].Aliases)
	}
	slices.SortFunc(out, func(a, b Leak) int { return compare(a.Ptr, b.Ptr) })
	return out
}

func compare(a, b Ptr) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// End is the exit: it records the trace's end event, so the model runs
// its leak check, and returns the leak report.
func (r *Registry) End() []Leak {
	r.lockAll()
	defer r.unlockAll()
	if r.record != nil {
		r.record(traces.Event{Op: traces.OpEnd})
	}
	return r.leaks()
}
