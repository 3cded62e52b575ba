package traces

// The event fields of the format and, per op, which are required and which
// optional. The reader checks events against these tables and the writer
// writes fields in their order, so the two cannot disagree.

// field names a known event field; fieldUnknown is any other name.
type field uint8

const (
	fieldUnknown field = iota
	fieldOp
	fieldAddr
	fieldNewAddr
	fieldSize
	fieldKind
	fieldFields
	fieldName
	fieldSlots
	fieldSlot
	fieldVar
	fieldSpace
	fieldSite
	fieldT
	fieldThread
	fieldStream
	fieldRefs // "count": a layer-2 object's reference count after the op
	fieldCount
)

func (f field) String() string { return fieldRows[f].name }

// fieldSet is a set of fields, one bit each.
type fieldSet uint32

func (f field) bit() fieldSet { return 1 << f }

// A field past the 32nd would have no bit (a shift past the width is 0,
// silently): the build fails here instead. Widen fieldSet then.
var _ [32 - fieldCount]struct{}

// lookupField returns the field a key names. The switch on string(key)
// does not allocate.
func lookupField(key []byte) field {
	switch string(key) {
	case "op":
		return fieldOp
	case "addr":
		return fieldAddr
	case "new_addr":
		return fieldNewAddr
	case "size":
		return fieldSize
	case "kind":
		return fieldKind
	case "fields":
		return fieldFields
	case "name":
		return fieldName
	case "slots":
		return fieldSlots
	case "slot":
		return fieldSlot
	case "var":
		return fieldVar
	case "space":
		return fieldSpace
	case "site":
		return fieldSite
	case "t":
		return fieldT
	case "thread":
		return fieldThread
	case "stream":
		return fieldStream
	case "count":
		return fieldRefs
	}
	return fieldUnknown
}

// opSpec is an op's fields as the decoder checks them: its row's lists
// and, for speed, the same as sets.
type opSpec struct {
	required []field
	optional []field // beside site, t and thread, which any op may have
	req, opt fieldSet
}

// anyOp are the optional fields of every op.
const anyOp = fieldSet(1<<fieldSite | 1<<fieldT | 1<<fieldThread)

var opSpecs = func() [opCount]opSpec {
	var s [opCount]opSpec
	for op, row := range opRows {
		s[op].required, s[op].optional = row.required, row.optional
		for _, fd := range row.required {
			s[op].req |= fd.bit()
		}
		for _, fd := range row.optional {
			s[op].opt |= fd.bit()
		}
		s[op].opt |= anyOp
	}
	return s
}()

// clearFields zeroes the fields in set, keeping Fields' backing array.
func clearFields(ev *Event, set fieldSet) {
	for f := fieldAddr; f < fieldCount; f++ {
		if set&f.bit() != 0 {
			fieldRows[f].clear(ev)
		}
	}
}
