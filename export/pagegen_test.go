package export_test

import (
	"fmt"
	"io"
	"slices"
)

// loopTrace writes a trace of a training loop's device memory, shaped as
// a PyTorch caching allocator's history: parameters made once, then per
// step the forward's activations, the loss, the backward's gradients
// (activations freed as it goes), the optimizer's state at the first
// step, the gradients freed. keepLoss keeps each step's loss block, the
// leak users write (losses.append(loss)). Segments of 64 MiB are reserved
// as blocks need them and never freed, as the allocator caches them.
// Events have times (t, ns). It returns the events written.
func loopTrace(w io.Writer, steps, layers int, keepLoss bool) (int, error) {
	g := &gpu{w: w}
	fmt.Fprintln(w, `{"format":"tlcheck-trace","version":1,"source":"loopTrace"}`)
	for l := range layers { // the parameters, kept
		g.get(uint64(4<<20+l*256<<10), fmt.Sprintf("model.py:%d", 20+l))
	}
	for s := range steps {
		var acts []uint64
		for l := range layers {
			acts = append(acts, g.get(uint64(6<<20+(l%3)*2<<20), fmt.Sprintf("layers.py:%d", 100+l%4*10)))
			if l%2 == 1 {
				tmp := g.get(1<<20, "functional.py:2153")
				g.put(tmp)
			}
		}
		loss := g.get(512, "loss.py:3059")
		var grads []uint64
		for l := layers - 1; l >= 0; l-- {
			grads = append(grads, g.get(uint64(4<<20+l*256<<10), "autograd/graph.py:825"))
			g.put(acts[l])
		}
		if s == 0 { // the optimizer's state, kept
			for l := range layers {
				g.get(uint64(8<<20+l*512<<10), "optim/adamw.py:180")
			}
		}
		for _, b := range grads {
			g.put(b)
		}
		if !keepLoss {
			g.put(loss)
		}
		g.t += 400_000 // the optimizer's kernels, the data loader
	}
	return g.events, g.err
}

// gpu places blocks first-fit in 64 MiB segments, reserving one more
// where none fits.
type gpu struct {
	w      io.Writer
	err    error
	t      int64
	events int
	segs   []*seg
}

type seg struct {
	addr, size uint64
	used       [][2]uint64 // live blocks' [addr, end), by addr
}

const segSize = 64 << 20

func (g *gpu) emit(format string, args ...any) {
	g.t += 20_000 + int64(g.events%7)*3000 // the kernels between two calls
	if g.err == nil {
		_, g.err = fmt.Fprintf(g.w, format+",\"t\":%d}\n", append(args, g.t)...)
	}
	g.events++
}

func (g *gpu) get(size uint64, site string) uint64 {
	size = (size + 511) &^ 511
	for _, s := range g.segs {
		at := s.addr
		for i, u := range s.used {
			if u[0]-at >= size {
				s.used = slices.Insert(s.used, i, [2]uint64{at, at + size})
				return g.handOut(at, size, site)
			}
			at = u[1]
		}
		if s.addr+s.size-at >= size {
			s.used = append(s.used, [2]uint64{at, at + size})
			return g.handOut(at, size, site)
		}
	}
	n := max(segSize, (size+segSize-1)&^(segSize-1))
	s := &seg{addr: 0x7f0000000000 + uint64(len(g.segs))*(1<<32), size: n}
	g.segs = append(g.segs, s)
	g.emit(`{"op":"dev_malloc","addr":"0x%x","size":%d,"site":"CUDACachingAllocator.cpp:1120"`, s.addr, n)
	s.used = append(s.used, [2]uint64{s.addr, s.addr + size})
	return g.handOut(s.addr, size, site)
}

func (g *gpu) handOut(addr, size uint64, site string) uint64 {
	g.emit(`{"op":"pool_get","addr":"0x%x","size":%d,"site":%q`, addr, size, site)
	return addr
}

func (g *gpu) put(addr uint64) {
	for _, s := range g.segs {
		if addr >= s.addr && addr < s.addr+s.size {
			i := slices.IndexFunc(s.used, func(u [2]uint64) bool { return u[0] == addr })
			s.used = slices.Delete(s.used, i, i+1)
		}
	}
	g.emit(`{"op":"pool_put","addr":"0x%x"`, addr)
}
