package model

import (
	"math/bits"

	"github.com/tlcheck/tlcheck/model/internal/index"
	"github.com/tlcheck/tlcheck/traces"
)

// kind is what made a thing; its row in kinds says everything the rules
// need of it. Adding a kind is adding a row (TestKindRows holds every row
// to every field).
type kind uint8

const (
	kBlock   kind = iota // malloc, realloc: a raw heap block
	kObject              // alloc, struct_init: a managed object
	kArena               // arena_get: an arena buffer
	kSegment             // dev_malloc: a device segment
	kPool                // pool_get: a pool block inside a segment
	kMapping             // dev_map: a mapped range of a reservation
	nKinds
)

// kindRow is everything the rules say of one kind. Every field must be
// set: enumerations start at 1 so that a zero one is a field left out.
type kindRow struct {
	noun     string // "pool block": how String names a thing of the kind
	what     string // "a pool block": what an op wanted, in "it is X, not a pool block"
	space    space  // the address space its addresses are in
	class    class  // things of one class must not overlap while both are live
	bytes    bytes  // whether its size counts toward live bytes
	diedVerb string // "was put back": how its death reads in messages
	diedWhat string // "put back": its death in Related
	atEnd    atEnd  // what a thing of the kind still live at end is
	leak     string // "was never put back": a leak's message after the thing; "%refs" stands for an object's references
	keep     keep   // how the index keeps things of the kind
	// thing is the kind as the op table names it (traces.Op.Names): an
	// op's lookup takes the kinds whose thing its row names (opMasks).
	thing traces.Things
}

// kinds is the table of kinds, by kind.
var kinds = [nKinds]kindRow{
	kBlock: {noun: "block", what: "a heap block", space: heapSpace, class: heapClass, bytes: counted,
		diedVerb: "was freed", diedWhat: "freed", atEnd: leaked, leak: "was never freed", keep: lean, thing: traces.ThingBlock},
	kObject: {noun: "object", what: "an object", space: heapSpace, class: heapClass, bytes: counted,
		diedVerb: "died", diedWhat: "died", atEnd: heldIfReached,
		leak: "is still alive at end with %refs, and no parameter or open scope holds it", keep: pinned, thing: traces.ThingObject},
	kArena: {noun: "arena buffer", what: "an arena buffer", space: heapSpace, class: arenaClass, bytes: counted,
		diedVerb: "died with its frame", diedWhat: "frame exited", atEnd: held, leak: "was never freed", keep: plain, thing: traces.ThingArena},
	kSegment: {noun: "device segment", what: "a device segment", space: deviceSpace, class: segmentClass, bytes: counted,
		diedVerb: "was freed", diedWhat: "freed", atEnd: held, leak: "was never freed", keep: plain, thing: traces.ThingSegment},
	kPool: {noun: "pool block", what: "a pool block", space: deviceSpace, class: poolClass, bytes: inside,
		diedVerb: "was put back", diedWhat: "put back", atEnd: leaked, leak: "was never put back", keep: plain, thing: traces.ThingPool},
	// A mapped range shares the segments' class: mapping bytes a live
	// segment or range holds is an overlap (a double map).
	kMapping: {noun: "mapped range", what: "a mapped range", space: deviceSpace, class: segmentClass, bytes: counted,
		diedVerb: "was unmapped", diedWhat: "unmapped", atEnd: held, leak: "was never unmapped", keep: plain, thing: traces.ThingMapping},
}

func (k kind) row() *kindRow { return &kinds[k] }

// space is an address space: the host heap or the device.
type space uint8

const (
	heapSpace space = iota + 1
	deviceSpace
)

// index is the index's number for s.
func (s space) index() index.Space { return index.Space(s - 1) }

// nSpaces is how many spaces there are.
const nSpaces = int(deviceSpace)

// class is an overlap class. Heap blocks and objects share one; things of
// different classes may nest (an arena buffer in a heap block).
type class uint8

const (
	heapClass class = iota + 1
	arenaClass
	segmentClass
	poolClass
)

// bytes says whether a kind's size counts toward live bytes: pool blocks
// lie inside segments, which are counted already.
type bytes uint8

const (
	counted bytes = iota + 1
	inside
)

// atEnd is what a thing still live at end is: a leak, or still reachable.
type atEnd uint8

const (
	leaked        atEnd = iota + 1 // a leak: raw blocks, pool blocks not put back
	held                           // held by design: buffers of open frames, segments a caching pool keeps
	heldIfReached                  // objects: held if a param or an open scope's record reaches it
)

// keep is how the index keeps things of a kind (see index.Config).
type keep uint8

const (
	lean   keep = iota + 1 // raw blocks, most of a heap log: no extra, and the index keeps their deaths
	pinned                 // objects, which records and params name after the index forgets them
	plain
)

// indexConfig tells the index of the kinds.
func indexConfig() index.Config[thing] {
	cfg := index.Config[thing]{Spaces: nSpaces, NewPinned: newObject}
	for k := range nKinds {
		switch kinds[k].keep {
		case lean:
			cfg.Lean |= index.Kind(k).Mask()
		case pinned:
			cfg.Pinned |= index.Kind(k).Mask()
		}
	}
	return cfg
}

func (k kind) mask() kindMask { return 1 << k }

// counted reports whether the thing's bytes count toward live bytes.
func (k kind) counted() bool { return kinds[k].bytes == counted }

// kindMask is a set of kinds: the index's, which holds up to 64.
type kindMask = index.KindMask

// The table must fit a kindMask.
var _ = [1]int{}[uint64(nKinds)/index.MaxKinds]

// anyKind is every kind of the model.
const anyKind kindMask = 1<<nKinds - 1

// opMasks is, by op, the kinds of thing its addr names: those whose row's
// thing its row in the op table names. A rule looks up what its op names
// through it (lookup), so the mask cannot be another op's.
var opMasks = func() (m [256]kindMask) {
	for _, op := range traces.Ops() {
		for k := range nKinds {
			if op.Names()&kinds[k].thing != 0 {
				m[op] |= k.mask()
			}
		}
	}
	return m
}()

// maskWhat names what an op of several kinds wanted, as kindRow.what does
// for one. TestOpMasks fails for an op whose mask has no name.
var maskWhat = map[kindMask]string{kBlock.mask() | kObject.mask(): "a heap block or object"}

// spaceOf is the space of the kinds in mask, which share one
// (TestKindRows holds the masks the ops name to that).
func spaceOf(mask kindMask) space {
	return kinds[bits.TrailingZeros64(uint64(mask))%64].space
}
