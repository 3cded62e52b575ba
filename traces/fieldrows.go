package traces

import "strconv"

// The field table: one row per event field, with everything the package
// does with the field but decode it. Decoding stays a switch (decodeField,
// lookupField) because it is the hot path; TestFieldTable proves that the
// switch knows every field of this table, by a round trip of each.

// fieldRow is one field's row.
type fieldRow struct {
	name string
	// want describes its values in error messages ("want a string").
	want string
	// isSet reports whether the event has a value for it worth writing:
	// the writer writes an optional field only when it is set.
	isSet func(*Event) bool
	// clear gives the event no value for it (null, or a field the op does
	// not have).
	clear func(*Event)
	// appendValue appends its value as JSON.
	appendValue func([]byte, *Event) []byte
}

var fieldRows = [fieldCount]fieldRow{
	fieldUnknown: {
		isSet:       func(*Event) bool { return false },
		clear:       func(*Event) {},
		appendValue: func(dst []byte, _ *Event) []byte { return append(dst, "null"...) },
	},
	fieldOp: {
		name:        "op",
		want:        wantString,
		isSet:       func(ev *Event) bool { return ev.Op != OpInvalid },
		clear:       func(ev *Event) { ev.Op = OpInvalid },
		appendValue: func(dst []byte, ev *Event) []byte { return appendString(dst, ev.Op.String()) },
	},
	fieldAddr: {
		name:        "addr",
		want:        wantAddr,
		isSet:       func(ev *Event) bool { return ev.Addr != 0 },
		clear:       func(ev *Event) { ev.Addr = 0 },
		appendValue: func(dst []byte, ev *Event) []byte { return appendAddr(dst, ev.Addr) },
	},
	fieldNewAddr: {
		name:        "new_addr",
		want:        wantAddr,
		isSet:       func(ev *Event) bool { return ev.NewAddr != 0 },
		clear:       func(ev *Event) { ev.NewAddr = 0 },
		appendValue: func(dst []byte, ev *Event) []byte { return appendAddr(dst, ev.NewAddr) },
	},
	fieldSize: {
		name: "size",
		want: wantUint,
		// Size 0 is a value: HasSize says whether one was given.
		isSet:       func(ev *Event) bool { return ev.HasSize },
		clear:       func(ev *Event) { ev.Size, ev.HasSize = 0, false },
		appendValue: func(dst []byte, ev *Event) []byte { return strconv.AppendUint(dst, ev.Size, 10) },
	},
	fieldKind: {
		name:        "kind",
		want:        wantString,
		isSet:       func(ev *Event) bool { return ev.Kind != "" },
		clear:       func(ev *Event) { ev.Kind = "" },
		appendValue: func(dst []byte, ev *Event) []byte { return appendString(dst, ev.Kind) },
	},
	fieldFields: {
		name:        "fields",
		want:        wantFields,
		isSet:       func(ev *Event) bool { return len(ev.Fields) > 0 },
		clear:       func(ev *Event) { ev.Fields = ev.Fields[:0] },
		appendValue: appendFields,
	},
	fieldName: {
		name:        "name",
		want:        wantString,
		isSet:       func(ev *Event) bool { return ev.Name != "" },
		clear:       func(ev *Event) { ev.Name = "" },
		appendValue: func(dst []byte, ev *Event) []byte { return appendString(dst, ev.Name) },
	},
	fieldSlots: {
		name:        "slots",
		want:        wantUint,
		isSet:       func(ev *Event) bool { return ev.Slots != 0 },
		clear:       func(ev *Event) { ev.Slots = 0 },
		appendValue: func(dst []byte, ev *Event) []byte { return strconv.AppendInt(dst, int64(ev.Slots), 10) },
	},
	fieldSlot: {
		name:        "slot",
		want:        wantUint,
		isSet:       func(ev *Event) bool { return ev.Slot != 0 },
		clear:       func(ev *Event) { ev.Slot = 0 },
		appendValue: func(dst []byte, ev *Event) []byte { return strconv.AppendInt(dst, int64(ev.Slot), 10) },
	},
	fieldVar: {
		name:        "var",
		want:        wantString,
		isSet:       func(ev *Event) bool { return ev.Var != "" },
		clear:       func(ev *Event) { ev.Var = "" },
		appendValue: func(dst []byte, ev *Event) []byte { return appendString(dst, ev.Var) },
	},
	fieldSpace: {
		name: "space",
		want: wantSpace,
		// The heap is the default space: only device is written.
		isSet:       func(ev *Event) bool { return ev.Space == SpaceDevice },
		clear:       func(ev *Event) { ev.Space = SpaceHeap },
		appendValue: func(dst []byte, ev *Event) []byte { return appendString(dst, ev.Space.String()) },
	},
	fieldSite: {
		name:        "site",
		want:        wantString,
		isSet:       func(ev *Event) bool { return ev.Site != "" },
		clear:       func(ev *Event) { ev.Site = "" },
		appendValue: func(dst []byte, ev *Event) []byte { return appendString(dst, ev.Site) },
	},
	fieldT: {
		name:        "t",
		want:        wantInt,
		isSet:       func(ev *Event) bool { return ev.T != 0 },
		clear:       func(ev *Event) { ev.T = 0 },
		appendValue: func(dst []byte, ev *Event) []byte { return strconv.AppendInt(dst, ev.T, 10) },
	},
	fieldThread: {
		name: "thread",
		want: wantThread,
		// Written as a string whatever it was read as: 7 and "7" read alike.
		isSet:       func(ev *Event) bool { return ev.Thread != "" },
		clear:       func(ev *Event) { ev.Thread = "" },
		appendValue: func(dst []byte, ev *Event) []byte { return appendString(dst, ev.Thread) },
	},
	fieldStream: {
		name: "stream",
		want: wantUint,
		// Stream 0 is a stream (CUDA's default one), so the field is
		// required where an op has it; isSet only says it is not 0.
		isSet:       func(ev *Event) bool { return ev.Stream != 0 },
		clear:       func(ev *Event) { ev.Stream = 0 },
		appendValue: func(dst []byte, ev *Event) []byte { return strconv.AppendUint(dst, ev.Stream, 10) },
	},
	fieldRefs: {
		name: "count",
		want: wantUint,
		// Count 0 is a value (a release that kills): HasCount says
		// whether one was given.
		isSet:       func(ev *Event) bool { return ev.HasCount },
		clear:       func(ev *Event) { ev.Count, ev.HasCount = 0, false },
		appendValue: func(dst []byte, ev *Event) []byte { return strconv.AppendUint(dst, ev.Count, 10) },
	},
}

func appendFields(dst []byte, ev *Event) []byte {
	dst = append(dst, '[')
	for i, a := range ev.Fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendAddr(dst, a)
	}
	return append(dst, ']')
}
