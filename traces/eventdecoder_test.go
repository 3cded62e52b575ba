package traces_test

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

func TestEventDecoder(t *testing.T) {
	d := traces.NewEventDecoder()
	var ev traces.Event
	for _, tc := range []struct {
		in, want string // want: the event as AppendEvent writes it, or an error's text
	}{
		{`{"op":"alloc","addr":"0x10","size":16}`, `{"op":"alloc","addr":"0x10","size":16}`},
		{` {"op":"struct_init","addr":"0x20","size":8,"fields":["0x10","0x0"]} `, `{"op":"struct_init","addr":"0x20","size":8,"fields":["0x10","0x0"]}`},
		{`{"op":"free","addr":"0x10"}`, `{"op":"free","addr":"0x10"}`},
		{`{"op":"alloc","size":16}`, "addr"},
		{`{"op":"nope"}`, "op"},
		{`{"op":"free","addr":"0x10"} x`, "after the event"},
		{`[1]`, "an event object"},
		{``, "an event object"},
	} {
		err := d.Decode([]byte(tc.in), &ev)
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode(%s): %v, want an error with %q", tc.in, err, tc.want)
			}
			continue
		}
		if got := string(traces.AppendEvent(nil, &ev)); got != tc.want {
			t.Errorf("Decode(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
