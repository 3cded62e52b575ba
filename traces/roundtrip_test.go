package traces

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// genEvent draws a valid event: any op, its required fields with any
// values (a size no more than fits below 2^64), and any of its optional
// fields.
func genEvent(t *rapid.T) Event {
	ev := Event{Op: rapid.SampledFrom(Ops()).Draw(t, "op")}
	spec := &opSpecs[ev.Op]
	for _, f := range spec.required {
		setField(t, &ev, f)
	}
	for _, f := range append(spec.optional[:len(spec.optional):len(spec.optional)], fieldSite, fieldT, fieldThread) {
		if rapid.Bool().Draw(t, "set "+f.String()) {
			setField(t, &ev, f)
		}
	}
	// A block lies below 2^64: a size that would pass it is cut to fit.
	at := uint64(ev.Addr)
	if ev.Op == OpRealloc {
		at = uint64(ev.NewAddr)
	}
	if at != 0 && ev.Size > -at {
		ev.Size = -at
	}
	return ev
}

func setField(t *rapid.T, ev *Event, f field) {
	addr := rapid.Custom(func(t *rapid.T) Addr { return Addr(rapid.Uint64().Draw(t, "addr")) })
	slot := rapid.IntRange(0, maxSlot)
	switch f {
	case fieldAddr:
		ev.Addr = addr.Draw(t, "addr")
	case fieldNewAddr:
		ev.NewAddr = addr.Draw(t, "new_addr")
	case fieldSize:
		ev.Size, ev.HasSize = rapid.Uint64().Draw(t, "size"), ev.Op == OpRead || ev.Op == OpWrite
	case fieldFields:
		ev.Fields = rapid.SliceOfN(addr, 0, 4).Draw(t, "fields")
	case fieldSlots:
		ev.Slots = slot.Draw(t, "slots")
	case fieldSlot:
		ev.Slot = slot.Draw(t, "slot")
	case fieldSpace:
		ev.Space = rapid.SampledFrom([]Space{SpaceHeap, SpaceDevice}).Draw(t, "space")
	case fieldT:
		ev.T = rapid.Int64().Draw(t, "t")
	case fieldKind:
		ev.Kind = rapid.String().Draw(t, "kind")
	case fieldName:
		ev.Name = rapid.String().Draw(t, "name")
	case fieldVar:
		ev.Var = rapid.String().Draw(t, "var")
	case fieldSite:
		ev.Site = rapid.String().Draw(t, "site")
	case fieldThread:
		ev.Thread = rapid.String().Draw(t, "thread")
	case fieldStream:
		ev.Stream = rapid.Uint64().Draw(t, "stream")
	case fieldRefs:
		ev.Count, ev.HasCount = rapid.Uint64().Draw(t, "count"), true
	default:
		t.Fatalf("field %s: setField (roundtrip_test.go) has no generator for it", f)
	}
}

// TestRoundTrip: any valid trace, written in either layout, reads back as
// it was written.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := Header{
			Format:  FormatName,
			Version: Version,
			Effects: rapid.Bool().Draw(t, "effects"),
			Source:  rapid.String().Draw(t, "source"),
		}
		evs := rapid.SliceOfN(rapid.Custom(genEvent), 0, 8).Draw(t, "events")
		for _, doc := range []bool{false, true} {
			var b bytes.Buffer
			w := NewWriter(&b, h)
			if doc {
				w = NewDocumentWriter(&b, h)
			}
			for i := range evs {
				if !json.Valid(AppendEvent(nil, &evs[i])) {
					t.Fatalf("AppendEvent wrote invalid JSON: %s", AppendEvent(nil, &evs[i]))
				}
				if err := w.Write(&evs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			gotH, got, _, err := readAll(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("reading back\n%s: %v", b.String(), err)
			}
			if gotH != h {
				t.Fatalf("header %+v, want %+v", gotH, h)
			}
			if diff := cmp.Diff(evs, got, equateEvents); diff != "" {
				t.Fatalf("document %v: events (-written +read):\n%s", doc, diff)
			}
		}
	})
}
