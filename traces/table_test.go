package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The completeness tests: they walk the op table (ops.go) and the field
// table (fieldrows.go) and prove that each row reached every place that
// must know it. Each failure names the op or field and the step that was
// left out; CONTRIBUTING.md lists the steps in the same words.

// TestMain checks that every row of the field table is whole before any
// test runs: the writer calls a row's functions without a nil check (it is
// the hot path), so a field constant without its row would otherwise be a
// panic in whichever test writes it first, not a failure that names it.
func TestMain(m *testing.M) {
	if err := fieldRowsWhole(); err != nil {
		fmt.Fprintln(os.Stderr, "traces:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func fieldRowsWhole() error {
	for f := fieldOp; f < fieldCount; f++ {
		row := &fieldRows[f]
		if row.name == "" || row.want == "" || row.isSet == nil || row.clear == nil || row.appendValue == nil {
			return fmt.Errorf("field %d (after %q): its row in fieldrows.go is missing or lacks name, want, isSet, clear or appendValue",
				f, fieldRows[f-1].name)
		}
	}
	return nil
}

// sampleField gives ev a value for f that is not the field's zero value,
// so that a round trip shows whether the field was written and read.
func sampleField(ev *Event, f field) {
	switch f {
	case fieldAddr:
		ev.Addr = 0x1000
	case fieldNewAddr:
		ev.NewAddr = 0x2000
	case fieldSize:
		ev.Size, ev.HasSize = 64, ev.Op == OpRead || ev.Op == OpWrite
	case fieldKind:
		ev.Kind = "grad"
	case fieldFields:
		ev.Fields = []Addr{0x3000, 0}
	case fieldName:
		ev.Name = "w"
	case fieldSlots:
		ev.Slots = 3
	case fieldSlot:
		ev.Slot = 2
	case fieldVar:
		ev.Var = "x"
	case fieldSpace:
		ev.Space = SpaceDevice
	case fieldSite:
		ev.Site = "a.tl:1"
	case fieldT:
		ev.T = -5
	case fieldThread:
		ev.Thread = "7"
	case fieldStream:
		ev.Stream = 3
	case fieldRefs:
		ev.Count, ev.HasCount = 2, true
	}
}

// sampleEvent is a valid event of op with its required fields set and, of
// the others, those in with.
func sampleEvent(op Op, with ...field) Event {
	ev := Event{Op: op}
	for _, f := range opSpecs[op].required {
		sampleField(&ev, f)
	}
	for _, f := range with {
		sampleField(&ev, f)
	}
	return ev
}

// readOne reads one event line after a header.
func readOne(line []byte) (Event, error) {
	_, evs, _, err := readAll(strings.NewReader(plainHeader + "\n" + string(line) + "\n"))
	if err != nil {
		return Event{}, err
	}
	if len(evs) != 1 {
		return Event{}, fmt.Errorf("read %d events, want 1", len(evs))
	}
	return evs[0], nil
}

// withKey returns the event object line with key set to value, or
// without key if value is empty.
func withKey(t *testing.T, line []byte, key, value string) []byte {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if value == "" {
		delete(obj, key)
	} else {
		obj[key] = json.RawMessage(value)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpTable proves that every op of the table is decoded, written,
// schema-checked and documented: its name reads back as the op, a valid
// event of it round-trips with each of its fields, schema.json accepts
// that event and rejects it without each required field (as the Reader
// does), and FORMAT.md lists it, with the same fields, in its layer's
// table. It also checks the reverse: FORMAT.md and schema.json list no op
// the table lacks. (model/ops_test.go proves that the model has a rule.)
func TestOpTable(t *testing.T) {
	s := loadSchemas(t)
	docOps := formatOps(t)
	schemaOps := schemaEnum(t)
	names := map[string]Op{}
	for _, op := range Ops() {
		row := &opRows[op]
		name := row.name
		if name == "" {
			t.Errorf("op %d: its row in ops.go has no name", op)
			continue
		}
		if prev, dup := names[name]; dup {
			t.Errorf("op %s: two rows of ops.go have this name (ops %d and %d)", name, prev, op)
		}
		names[name] = op
		if row.layer < 1 || row.layer > 5 {
			t.Errorf("op %s: layer %d in ops.go; want 1 to 5", name, row.layer)
		}
		if got := lookupOp([]byte(name)); got != op {
			t.Errorf("op %s: not decoded: lookupOp (lookup_gen.go) has no case for it: run go generate ./traces", name)
		}
		if got, ok := ParseOp(name); !ok || got != op {
			t.Errorf("op %s: ParseOp gives %v, %v", name, got, ok)
		}

		// Decoded and written: alone, and with each optional field.
		for _, with := range append([][]field{nil}, eachField(opSpecs[op].optional, fieldSite, fieldT, fieldThread)...) {
			ev := sampleEvent(op, with...)
			line := AppendEvent(nil, &ev)
			got, err := readOne(line)
			if err != nil {
				t.Errorf("op %s: what the writer wrote does not read: %s: %v", name, line, err)
				continue
			}
			if diff := cmp.Diff(ev, got, equateEvents); diff != "" {
				t.Errorf("op %s: does not read back as written (%s) (-written +read):\n%s", name, line, diff)
			}
			if err := validate(s.event, line); err != nil {
				t.Errorf("op %s: schema.json rejects a valid event %s: %v", name, line, err)
			}
		}

		// Schema-checked: each required field is required there too.
		ev := sampleEvent(op)
		line := AppendEvent(nil, &ev)
		for _, f := range opSpecs[op].required {
			short := withKey(t, line, f.String(), "")
			if validate(s.event, short) == nil {
				t.Errorf("op %s: schema.json accepts it without its required field %s: %s", name, f, short)
			}
			if _, err := readOne(short); err == nil {
				t.Errorf("op %s: the Reader accepts it without its required field %s: %s", name, f, short)
			}
		}
		if !slices.Contains(schemaOps, name) {
			t.Errorf("op %s: not in schema.json's enum of ops ($defs/event/properties/op)", name)
		}

		// Documented in its layer's table, with its fields.
		doc, ok := docOps[name]
		switch {
		case !ok:
			t.Errorf("op %s: not documented in FORMAT.md (no row of the layer %d table names it)", name, row.layer)
		case doc.layer != row.layer:
			t.Errorf("op %s: documented in FORMAT.md's layer %d table; ops.go says layer %d", name, doc.layer, row.layer)
		default:
			if want := fieldNamesOf(row.required); !slices.Equal(doc.required, want) {
				t.Errorf("op %s: FORMAT.md lists required fields %q; ops.go has %q", name, doc.required, want)
			}
			if want := fieldNamesOf(row.optional); !slices.Equal(doc.optional, want) {
				t.Errorf("op %s: FORMAT.md lists optional fields %q; ops.go has %q", name, doc.optional, want)
			}
		}
	}
	for name, doc := range docOps {
		if _, ok := names[name]; !ok {
			t.Errorf("op %s: FORMAT.md's layer %d table lists it, but ops.go has no row for it", name, doc.layer)
		}
	}
	for _, name := range schemaOps {
		if _, ok := names[name]; !ok {
			t.Errorf("op %s: schema.json lists it, but ops.go has no row for it", name)
		}
	}
}

// eachField returns each of optional and more as a list of one.
func eachField(optional []field, more ...field) [][]field {
	var each [][]field
	for _, f := range append(slices.Clip(optional), more...) {
		each = append(each, []field{f})
	}
	return each
}

func fieldNamesOf(fs []field) []string {
	names := []string{}
	for _, f := range fs {
		names = append(names, f.String())
	}
	return names
}

// TestFieldTable proves that every field of the table is decoded, written,
// set, cleared, typed in the schema and documented: on an op that has it,
// a sample value is written under its name and reads back; without it the
// row's isSet says unset and with it set; clear takes it back out; the
// schema accepts the sample and rejects a value of no JSON type a field
// has; FORMAT.md's Values section names it.
func TestFieldTable(t *testing.T) {
	s := loadSchemas(t)
	md, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	_, values, _ := bytes.Cut(md, []byte("\n## Values\n"))
	values, _, _ = bytes.Cut(values, []byte("\n## "))
	if len(values) == 0 {
		t.Fatal("FORMAT.md: no \"## Values\" section")
	}
	for f := fieldOp + 1; f < fieldCount; f++ {
		row := &fieldRows[f]
		name := row.name
		// TestMain has checked that the row is whole.
		if got := lookupField([]byte(name)); got != f {
			t.Errorf("field %s: not decoded: lookupField (fields.go) has no case for it", name)
			continue
		}
		if !bytes.Contains(values, []byte("`"+name+"`")) {
			t.Errorf("field %s: not documented in FORMAT.md's Values section (`%s` appears nowhere there)", name, name)
		}
		op, required := opWith(f)
		if op == OpInvalid {
			t.Errorf("field %s: no op's row in ops.go has it", name)
			continue
		}
		base := sampleEvent(op)
		if required {
			row.clear(&base) // the event as it would be without the field
		}
		ev := base
		sampleField(&ev, f)
		if cmp.Equal(ev, base, equateEvents) {
			t.Errorf("field %s: no sample value: give it one in sampleField (table_test.go)", name)
			continue
		}
		// isSet decides only whether an optional field is written.
		if !required && !row.isSet(&ev) {
			t.Errorf("field %s: its row's isSet says unset on a %s with it", name, op)
		}
		if !required && row.isSet(&base) {
			t.Errorf("field %s: its row's isSet says set on a %s without it", name, op)
		}
		line := AppendEvent(nil, &ev)
		if !bytes.Contains(line, []byte(`"`+name+`":`)) {
			t.Errorf("field %s: not written by AppendEvent: %s", name, line)
			continue
		}
		got, err := readOne(line)
		if err != nil {
			t.Errorf("field %s: what the writer wrote does not read: %s: %v", name, line, err)
			continue
		}
		if diff := cmp.Diff(ev, got, equateEvents); diff != "" {
			t.Errorf("field %s: not decoded as written (decodeField in decode.go?): %s (-written +read):\n%s", name, line, diff)
		}
		cleared := ev
		row.clear(&cleared)
		if diff := cmp.Diff(base, cleared, equateEvents); diff != "" {
			t.Errorf("field %s: its row's clear leaves a value (-without +cleared):\n%s", name, diff)
		}
		if err := validate(s.event, line); err != nil {
			t.Errorf("field %s: schema.json rejects a valid value: %s: %v", name, line, err)
		}
		bad := withKey(t, line, name, `{"no":"field has an object value"}`)
		if validate(s.event, bad) == nil {
			t.Errorf("field %s: schema.json does not type it: it accepts %s", name, bad)
		}
		if _, err := readOne(bad); err == nil {
			t.Errorf("field %s: the Reader accepts %s", name, bad)
		}
	}
}

// opWith returns an op that has f, one where f is optional if there is
// one (so that isSet is tested), and whether f is required there.
func opWith(f field) (Op, bool) {
	found := OpInvalid
	for _, op := range Ops() {
		spec := &opSpecs[op]
		if spec.opt&f.bit() != 0 {
			return op, false
		}
		if spec.req&f.bit() != 0 && found == OpInvalid {
			found = op
		}
	}
	return found, found != OpInvalid
}
