package model

import (
	"github.com/tlcheck/tlcheck/model/internal/index"
	"github.com/tlcheck/tlcheck/traces"
)

// memory is the model's things by address: the one door from the rules to
// the index (package index: the tuned one, or with the build tag
// naiveindex the naive one). It speaks the model's verbs (make a thing,
// the thing at an address, the thing an address lies inside, a thing
// died) and keeps what the rules should not see: the index's reuse fast
// path, its query buffers, and how it keeps each kind (kindRow.keep).
type memory struct {
	ix    *things
	found []hit    // buffer: what a range query found
	met   []*thing // buffer: the live things among them that make or liveWithin return
}

// things is the model's index of things by address.
type things = index.Index[thing, *thing]

// hit is a thing an index's range query found.
type hit = index.Hit[thing]

func newMemory() memory { return memory{ix: index.New[thing](indexConfig())} }

// reset empties m for a new trace. It keeps the memory m grew: the
// index's tables (see index.Interface) and the buffers.
func (m *memory) reset() {
	m.ix.Reset()
	m.forget()
}

// forget clears the buffers, holding nothing alive, keeping their arrays.
func (m *memory) forget() {
	clear(m.found)
	m.found = m.found[:0]
	clear(m.met)
	m.met = m.met[:0]
}

// span returns the range an allocation of size bytes at a owns,
// [a, a+max(size,1)), clamped at the top of the space.
func span(a traces.Addr, size uint64) (lo, hi uint64) { return index.Span(uint64(a), size) }

// A new thing of kind k over [lo, hi) is made in one of two ways. reuse
// is the common one: the range of a dead thing that starts where the new
// one does, meeting nothing live, where the index can tell at once. Else
// meeting returns the live things of k's overlap class that the range
// meets, and place, called next with nothing changed in between, makes
// the thing, forgetting the dead things whose range it takes. A rule may
// look at what meeting found and make nothing (see Checker.make): meeting
// changes nothing.

// reuse makes a new thing of kind k over [lo, hi) in the range of a dead
// one, where the index can tell that the range meets nothing else, and
// returns it; else it returns nil, changing nothing.
func (m *memory) reuse(k kind, lo, hi, size uint64) *thing {
	return m.ix.TryReuse(k.row().space.index(), index.Kind(k), lo, hi, size)
}

// meeting returns the live things of k's overlap class that [lo, hi)
// meets, valid until m's next call, and keeps what the range meets for
// place.
func (m *memory) meeting(k kind, lo, hi uint64) []*thing {
	m.forget()
	m.found = m.ix.Overlapping(k.row().space.index(), lo, hi, m.found)
	for i := range m.found {
		if h := &m.found[i]; !h.Dead && kind(h.Kind).row().class == k.row().class {
			m.met = append(m.met, h.Thing)
		}
	}
	return m.met
}

// place makes a new thing of kind k over [lo, hi) and of size bytes,
// given what meeting found for that range, and forgets the dead things
// whose range it takes.
func (m *memory) place(k kind, lo, hi, size uint64) *thing {
	return m.ix.Place(k.row().space.index(), index.Kind(k), lo, hi, size, m.found)
}

// died tells the index that t died: it reads the deaths of the kinds it
// keeps lean from its own entries, the others' from the thing.
func (m *memory) died(t *thing) {
	if row := t.kind().row(); row.keep == lean {
		m.ix.Died(row.space.index(), t)
	}
}

// at returns the thing of a kind in mask that starts at a, live or dead,
// or nil. The kinds in mask share a space (TestOpMasks).
func (m *memory) at(a traces.Addr, mask kindMask) *thing {
	return m.ix.StartingAt(spaceOf(mask).index(), uint64(a), mask)
}

// inside returns the thing of a kind in mask whose range holds address a
// of space sp, live or dead, or nil.
func (m *memory) inside(sp space, a uint64, mask kindMask) *thing {
	return m.ix.Containing(sp.index(), a, mask)
}

// liveWithin returns the live things of kind k that meet [lo, hi),
// valid until m's next call.
func (m *memory) liveWithin(k kind, lo, hi uint64) []*thing {
	m.forget()
	m.found = m.ix.Overlapping(k.row().space.index(), lo, hi, m.found)
	for _, h := range m.found {
		if kind(h.Kind) == k && h.Thing.state() == live {
			m.met = append(m.met, h.Thing)
		}
	}
	return m.met
}

// killBlockAt is a free's fast path: where the index can tell from its
// entries alone that a live block starts at a, it records the block's
// death and says its size, so that the block is only written to, and
// reports true. Else it returns the block or object that starts at a,
// and false.
func (m *memory) killBlockAt(a traces.Addr, mask kindMask) (t *thing, size uint64, killed bool) {
	return m.ix.KillLiveAt(heapSpace.index(), uint64(a), index.Kind(kBlock), mask)
}

// live appends every live (and due) thing, in no order, to out.
func (m *memory) live(out []*thing) []*thing {
	out = m.ix.Live(heapSpace.index(), out)
	return m.ix.Live(deviceSpace.index(), out)
}

// objects appends the objects the index remembers, live or not, to out:
// it keeps them apart, so this costs what is remembered, not the size of
// its tables.
func (m *memory) objects(out []*thing) []*thing { return m.ix.Pinned(out) }

// freeLiveBlock is a free's fast path: where memory can tell that a live
// block starts at a, it has recorded the block's death, and
// freeLiveBlock does the rest of kill and reports true. Else it returns
// the block or object that starts at a (see lookup), and false.
func (c *Checker) freeLiveBlock(op traces.Op, a traces.Addr) (*thing, bool) {
	t, size, killed := c.mem.killBlockAt(a, opMasks[op])
	if !killed {
		return t, false
	}
	t.Died, t.diedWhere = c.here.event+1, c.hereWhere()
	c.nlive--
	c.liveBytes -= size
	if c.watch != nil {
		c.watchDied(t, c.here.event)
	}
	return nil, true
}
