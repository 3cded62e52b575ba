package input

import (
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/tlcheck/tlcheck/traces"
)

// prefetch reads src on a goroutine of its own, a few batches of events
// ahead of the model, so that parsing and checking run on two cores: on a
// log of millions of events each costs about as much as the other.
//
// The returned Source yields exactly what src yields, in order, with the
// same positions and the same final error. stop ends the reading early;
// the caller must not use src itself after calling prefetch.
func prefetch(src traces.Source) (p *prefetcher, stop func()) {
	p = &prefetcher{
		header: src.Header(),
		full:   make(chan *batch, nBatches),
		free:   make(chan *batch, nBatches),
		done:   make(chan struct{}),
	}
	for range nBatches {
		p.free <- &batch{evs: make([]slot, batchSize)}
	}
	go p.fill(src)
	var once sync.Once
	return p, func() { once.Do(func() { close(p.done) }) }
}

const (
	// batchSize is how many events are handed over at once. On a 4M-line
	// mtrace log, 512 left the two goroutines waiting on each other (a
	// median of 0.47 s against 0.35 s for 2048); 1024 did as well as 2048,
	// and 4096 (0.37 s) spills the batches out of the cores' caches.
	batchSize = 2048
	nBatches  = 4 // batches in rotation: how far reading may run ahead
)

// slot is an event read ahead and its position, side by side: the model
// reads the position and a malloc's or free's fields (traces.Event puts
// them first) in one cache line, which the reading goroutine wrote on
// another core. A slot fills whole cache lines, so that the line is the
// slot's first in every slot, not one that straddles two: each line the
// model reads is one the other core hands over, and most events need one.
type slot struct {
	pos traces.Pos
	ev  traces.Event
	_   [slotPad]byte
}

const (
	cacheLine = 64
	// slotPad rounds a slot up to whole cache lines.
	slotPad = (cacheLine - (unsafe.Sizeof(traces.Pos{})+unsafe.Sizeof(traces.Event{}))%cacheLine) % cacheLine
)

// batch is a run of events read in a row, with their positions; err is
// what src.Next returned after the last of them (nil: not yet at the end).
type batch struct {
	evs   []slot
	n     int
	err   error
	panic *readerPanic // src panicked after evs[:n]
}

// readerPanic is a panic of the reading goroutine, carried over to the
// consumer's, where run's last-resort recover can see it: a panic on a
// goroutine of its own would kill the process with a stack dump.
type readerPanic struct {
	value any
	stack []byte
}

type prefetcher struct {
	header traces.Header
	full   chan *batch // read, waiting for the consumer
	free   chan *batch // consumed, waiting to be refilled
	done   chan struct{}
	cur    *batch // the batch being consumed
	i      int    // next event of cur
	pos    traces.Pos
}

// fill is the reading goroutine. It stops after the batch that holds
// src's first error (io.EOF included), or when stopped.
func (p *prefetcher) fill(src traces.Source) {
	var b *batch
	defer func() {
		if v := recover(); v != nil {
			b.panic = &readerPanic{v, debug.Stack()}
			select {
			case p.full <- b:
			case <-p.done:
			}
		}
	}()
	for {
		select {
		case b = <-p.free:
		case <-p.done:
			return
		}
		b.n, b.err = 0, nil
		for b.n < len(b.evs) {
			// Each slot keeps its own Fields backing array across refills:
			// the reader appends into it.
			if err := src.Next(&b.evs[b.n].ev); err != nil {
				b.err = err
				break
			}
			b.evs[b.n].pos = src.Pos()
			b.n++
		}
		select {
		case p.full <- b:
		case <-p.done:
			return
		}
		if b.err != nil {
			return
		}
	}
}

func (p *prefetcher) Header() traces.Header { return p.header }

func (p *prefetcher) Pos() traces.Pos { return p.pos }

// Next copies the next event into ev. Slices in ev stay valid until the
// following call, as traces.Source promises and no longer.
func (p *prefetcher) Next(ev *traces.Event) error {
	e, _, err := p.Lend()
	if err != nil {
		return err
	}
	*ev = *e
	return nil
}

// Lend returns the next event where it lies in its batch: the model reads
// it there, sparing a copy of every event across cores.
func (p *prefetcher) Lend() (*traces.Event, traces.Pos, error) {
	for p.cur == nil || p.i == p.cur.n {
		if p.cur != nil {
			if rp := p.cur.panic; rp != nil {
				panic(fmt.Sprintf("reading the trace: %v\n%s", rp.value, rp.stack))
			}
			if p.cur.err != nil {
				return nil, traces.Pos{}, p.cur.err // the end, or the error that ended reading: for good
			}
			p.free <- p.cur // never blocks: there are nBatches slots
		}
		p.cur, p.i = <-p.full, 0
	}
	s := &p.cur.evs[p.i]
	p.pos = s.pos
	p.i++
	return &s.ev, s.pos, nil
}
