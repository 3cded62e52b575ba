// Package index is the model's memory of things by address: for each
// address space, the things the rules made there, live ones and dead ones
// until a new thing takes their range. The rules ask it what starts at,
// holds or meets an address, and tell it what they make and kill; they
// never see how it keeps them.
//
// Two implementations keep the same contract (Interface): Tuned, a sparse
// multi-level page table over a store that recycles things' memory, fast
// on logs of millions of events; and Naive, a slice scanned on every
// query, plainly correct. Tuned keeps its big tables' buckets outside the
// Go heap, given back as soon as a table is left (Mapped says how much it
// holds there). Index is Tuned unless the model is built with the
// tag naiveindex; the model's tests pass under both, and this package's
// tests drive the two side by side.
//
// # Contract
//
// A thing is remembered in its space from Place (or TryReuse) until a
// later Place in that space is given it, dead, among what the new range
// meets; live things are never forgotten. "Newest" is the highest ID (the
// rules number things in the order made); "dead" is Head.Dead.
//
//   - StartingAt: of the remembered things that start at a and whose kind
//     is in mask, the newest live (or due) one, else the newest dead one;
//     nil if none.
//   - Containing: of the remembered things whose range holds a and whose
//     kind is in mask, the newest, live or dead; nil if none.
//   - Overlapping: every remembered thing whose range meets [lo, hi), each
//     once, in no order, with its kind and whether it is dead.
//   - Place: makes a thing of kind k over [lo, lo+size) (hi = Span's end),
//     given found, what Overlapping answered for that range with nothing
//     changed since. The dead things in found are forgotten (the tuned
//     index recycles them: their Hit.Thing may then hold another). The new
//     thing's Head has Lo, Size and kind set and ID 0 (the rules number
//     it); the rest is as Thing.Renew leaves it (zero for a lean kind, new
//     from Config.NewPinned for a pinned one).
//   - TryReuse: Place's fast path. It may decline (nil); it makes the
//     thing only where Place would forget exactly one dead thing, of kind
//     k, and nothing else.
//   - KillLiveAt: a free, with its fast path for a lean kind k. Where it
//     can tell cheaply that the one thing starting at a is live and of
//     kind k, it records its death and returns it, its size and true: the
//     caller must set its Died above 0 at once. It may decline; it then
//     returns what StartingAt(sp, a, mask) would, 0 and false.
//   - Died: tells the index that t, of a lean kind, died (its Died was
//     set above 0). The deaths of other kinds it reads from the things,
//     so telling it of those is allowed and does nothing.
//   - Live: the remembered things of a space not dead, each once, in no
//     order. Pinned: every remembered thing of a pinned kind, any space.
//   - Reset: forgets every thing, so that the index answers as a new one
//     with the same Config. It may keep memory it grew for the next
//     trace's things; a thing of the last trace that the caller still
//     holds (a pinned one) is not touched.
//   - Size and Check: for tests: what the index holds, and whether its
//     own books agree with the things.
package index

// Interface is the contract both indexes keep. The model calls the one
// chosen at build time (Index) directly, not through this interface, so
// that the hot path has no dynamic calls; the interface states the
// contract and the tests hold both to it.
type Interface[T any] interface {
	StartingAt(sp Space, a uint64, mask KindMask) *T
	Containing(sp Space, a uint64, mask KindMask) *T
	Overlapping(sp Space, lo, hi uint64, out []Hit[T]) []Hit[T]
	TryReuse(sp Space, k Kind, lo, hi, size uint64) *T
	Place(sp Space, k Kind, lo, hi, size uint64, found []Hit[T]) *T
	KillLiveAt(sp Space, a uint64, k Kind, mask KindMask) (*T, uint64, bool)
	Died(sp Space, t *T)
	Live(sp Space, out []*T) []*T
	Pinned(out []*T) []*T
	Reset()
	Size(sp Space) (things, cells int)
	Check() error
}
