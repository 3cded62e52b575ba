package traces

import "strings"

// String describes the event compactly, for messages: its op, then each
// field its op's row lists that the event has, as name and value, in
// the row's order ("arena_get slot 2 addr 0x1000 size 64 var x"). The op
// table says which fields an op has, so a new op is described with no
// change here.
func (ev *Event) String() string {
	if ev.Op >= opCount {
		return ev.Op.String()
	}
	var b strings.Builder
	b.WriteString(ev.Op.String())
	spec := &opSpecs[ev.Op]
	var buf []byte
	write := func(f field) {
		buf = fieldRows[f].appendValue(buf[:0], ev)
		b.WriteString(" " + f.String() + " ")
		if v := string(buf); len(v) >= 2 && v[0] == '"' && !strings.ContainsAny(v[1:len(v)-1], `"\ `) {
			b.WriteString(v[1 : len(v)-1]) // a plain string: no quotes needed
		} else {
			b.WriteString(v)
		}
	}
	for _, f := range spec.required {
		write(f)
	}
	for _, f := range spec.optional {
		if fieldRows[f].isSet(ev) {
			write(f)
		}
	}
	return b.String()
}
