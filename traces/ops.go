package traces

import "strconv"

// The op table: one row per op holds everything the format says about it.
// The decoder, the writer, the error messages and the model's choice of
// double-free over use-after-free all read their facts about an op from
// here. `go generate ./traces` writes from it lookupOp (lookup_gen.go),
// schema.json's op enum and allOf lines and doc.go's summary of ops, and
// TestGenerated fails while one is stale; the tests in table_test.go (and
// model/ops_test.go) walk the table to prove that every op is decoded,
// written, in FORMAT.md and known to the model. CONTRIBUTING.md lists the
// steps.

// Op is the operation an event records. The zero Op is invalid.
type Op uint8

// The operations of format version 1, grouped by layer.
const (
	OpInvalid Op = iota

	// Layer 1: raw heap.
	OpMalloc
	OpFree
	OpRealloc
	OpRead
	OpWrite

	// Layer 2: managed objects.
	OpScopeEnter
	OpScopeExit
	OpAlloc
	OpStructInit
	OpAcquire
	OpRelease
	OpRegister
	OpUnregister
	OpParamRegister
	OpParamRelease
	OpEnd

	// Layer 3: arena frames.
	OpFnEnter
	OpFnExit
	OpArenaGet

	// Layer 4: device memory and the pool.
	OpDevMalloc
	OpDevFree
	OpPoolGet
	OpPoolPut
	OpRecordStream
	OpDevMap
	OpDevUnmap

	// Layer 5: autograd.
	OpSave
	OpUnpack
	OpUnsave
	OpBump
	OpLeafGrad
	OpSnapshot
	OpRestore
	OpRecompute

	opCount // number of ops, invalid included
)

// Things is a set of the kinds of thing a trace makes. An op's row says
// which of them its addr names.
type Things uint8

const (
	ThingBlock   Things = 1 << iota // a raw heap block (malloc, realloc)
	ThingObject                     // a managed object (alloc, struct_init)
	ThingArena                      // an arena buffer (arena_get)
	ThingSegment                    // a device segment (dev_malloc)
	ThingPool                       // a pool block (pool_get)
	ThingMapping                    // a mapped range of a reservation (dev_map)
)

// opRow is one op's row.
type opRow struct {
	name  string
	layer int // the FORMAT.md section whose table lists it
	// required lists the fields the op must have, in the order of its
	// FORMAT.md table: the writer writes them in this order.
	required []field
	// optional lists its other fields, beside site, t and thread, which
	// every op may have.
	optional []field
	// endsLife: the op ends the life of what it names (or of a reference
	// to it), so the same op on something already dead is a double-free;
	// any other op on it is a use-after-free.
	endsLife bool
	// names are the kinds of thing that may start at its addr. Zero for an
	// op without addr, for one whose addr makes a thing, and for accesses,
	// which name bytes, not things.
	names Things
}

// fl makes the field lists of the table short.
func fl(f ...field) []field { return f }

var opRows = [opCount]opRow{
	OpInvalid: {name: "invalid"},

	OpMalloc:  {name: "malloc", layer: 1, required: fl(fieldAddr, fieldSize)},
	OpFree:    {name: "free", layer: 1, required: fl(fieldAddr), endsLife: true, names: ThingBlock | ThingObject},
	OpRealloc: {name: "realloc", layer: 1, required: fl(fieldAddr, fieldNewAddr, fieldSize), endsLife: true, names: ThingBlock | ThingObject},
	OpRead:    {name: "read", layer: 1, required: fl(fieldAddr), optional: fl(fieldSize, fieldVar, fieldSpace)},
	OpWrite:   {name: "write", layer: 1, required: fl(fieldAddr), optional: fl(fieldSize, fieldVar, fieldSpace)},

	OpScopeEnter:    {name: "scope_enter", layer: 2},
	OpScopeExit:     {name: "scope_exit", layer: 2},
	OpAlloc:         {name: "alloc", layer: 2, required: fl(fieldAddr, fieldSize), optional: fl(fieldKind, fieldRefs)},
	OpStructInit:    {name: "struct_init", layer: 2, required: fl(fieldAddr, fieldSize, fieldFields), optional: fl(fieldRefs)},
	OpAcquire:       {name: "acquire", layer: 2, required: fl(fieldAddr), optional: fl(fieldRefs), names: ThingObject},
	OpRelease:       {name: "release", layer: 2, required: fl(fieldAddr), optional: fl(fieldRefs), endsLife: true, names: ThingObject},
	OpRegister:      {name: "register", layer: 2, required: fl(fieldAddr), optional: fl(fieldRefs), names: ThingObject},
	OpUnregister:    {name: "unregister", layer: 2, required: fl(fieldAddr), optional: fl(fieldRefs), names: ThingObject},
	OpParamRegister: {name: "param_register", layer: 2, required: fl(fieldName, fieldAddr), optional: fl(fieldRefs), names: ThingObject},
	OpParamRelease:  {name: "param_release", layer: 2, required: fl(fieldName), optional: fl(fieldRefs), endsLife: true},
	OpEnd:           {name: "end", layer: 2},

	OpFnEnter:  {name: "fn_enter", layer: 3, required: fl(fieldSlots)},
	OpFnExit:   {name: "fn_exit", layer: 3},
	OpArenaGet: {name: "arena_get", layer: 3, required: fl(fieldSlot, fieldAddr, fieldSize), optional: fl(fieldVar)},

	OpDevMalloc: {name: "dev_malloc", layer: 4, required: fl(fieldAddr, fieldSize)},
	OpDevFree:   {name: "dev_free", layer: 4, required: fl(fieldAddr), endsLife: true, names: ThingSegment},
	OpPoolGet:   {name: "pool_get", layer: 4, required: fl(fieldAddr, fieldSize)},
	OpPoolPut:   {name: "pool_put", layer: 4, required: fl(fieldAddr), endsLife: true, names: ThingPool},
	// record_stream: another stream now uses the block (PyTorch's
	// Tensor.record_stream); the pool must not reuse it before that
	// stream's work is done.
	OpRecordStream: {name: "record_stream", layer: 4, required: fl(fieldAddr, fieldStream), names: ThingPool},
	// dev_map, dev_unmap: pages of a virtual reservation are backed by
	// physical memory, or no longer (cuMemMap, cuMemUnmap: PyTorch's
	// expandable segments, whose snapshots write segment_map and
	// segment_unmap). An unmap may take any part of what was mapped, or
	// several maps at once, so dev_unmap carries a size and names the
	// mapped ranges its range meets.
	OpDevMap:   {name: "dev_map", layer: 4, required: fl(fieldAddr, fieldSize)},
	OpDevUnmap: {name: "dev_unmap", layer: 4, required: fl(fieldAddr, fieldSize), endsLife: true, names: ThingMapping},

	// Layer 5: a node of the autograd graph saves a tensor for backward
	// (save), backward reads it (unpack), the node lets it go (unsave);
	// an in-place op bumps the version of the storage it writes (bump).
	// The model counts versions itself, by the storage's identity.
	OpSave:   {name: "save", layer: 5, required: fl(fieldName, fieldAddr), optional: fl(fieldKind), names: ThingObject},
	OpUnpack: {name: "unpack", layer: 5, required: fl(fieldName)},
	OpUnsave: {name: "unsave", layer: 5, required: fl(fieldName), endsLife: true},
	OpBump:   {name: "bump", layer: 5, required: fl(fieldAddr), optional: fl(fieldKind), names: ThingObject},
	// leaf_grad: the object at addr is the storage of a leaf that
	// requires grad, which no in-place op may write outside no_grad.
	OpLeafGrad: {name: "leaf_grad", layer: 5, required: fl(fieldAddr), names: ThingObject},
	// Checkpoints: snapshot copies a saved tensor's storage, at its
	// version then, into the object at addr (allocated, and later
	// released, as any object); restore unpacks the saved tensor from
	// such a snapshot; recompute writes its value back into its storage,
	// computed again from its node's inputs.
	OpSnapshot:  {name: "snapshot", layer: 5, required: fl(fieldName, fieldAddr), names: ThingObject},
	OpRestore:   {name: "restore", layer: 5, required: fl(fieldName, fieldAddr), names: ThingObject},
	OpRecompute: {name: "recompute", layer: 5, required: fl(fieldName)},
}

// String returns the op's name as written in a trace ("scope_enter").
func (op Op) String() string {
	if op < opCount {
		return opRows[op].name
	}
	return "op(" + strconv.Itoa(int(op)) + ")"
}

// Layer returns the layer whose table in FORMAT.md lists op (1 to 5), 0
// for an invalid op.
func (op Op) Layer() int {
	if op < opCount {
		return opRows[op].layer
	}
	return 0
}

// EndsLife reports whether op ends the life of what it names (free,
// release, dev_free, pool_put, ...): the same op on something already dead
// is then a double-free rather than a use-after-free.
func (op Op) EndsLife() bool {
	return op < opCount && opRows[op].endsLife
}

// Names returns the kinds of thing that may start at op's addr; zero for
// an op whose addr makes a thing or touches bytes, or that has none.
func (op Op) Names() Things {
	if op < opCount {
		return opRows[op].names
	}
	return 0
}

// Ops returns every valid op in declaration order.
func Ops() []Op {
	ops := make([]Op, 0, opCount-1)
	for op := OpInvalid + 1; op < opCount; op++ {
		ops = append(ops, op)
	}
	return ops
}

// ParseOp returns the op named s, or false if s names none.
func ParseOp(s string) (Op, bool) {
	for op := OpInvalid + 1; op < opCount; op++ {
		if opRows[op].name == s {
			return op, true
		}
	}
	return OpInvalid, false
}
