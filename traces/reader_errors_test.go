package traces

import (
	"errors"
	"strings"
	"testing"
)

// TestReadErrors feeds bad traces and checks the exact error: its place
// (line, event, field) and its message. Each input is read whole, then one
// byte at a time, and as a pipe: all three must fail the same way.
func TestReadErrors(t *testing.T) {
	const h = plainHeader + "\n"
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	for _, tt := range []struct {
		name, text string
		want       string // Error(), File unset
		line, ev   int
		field      string
	}{
		// The header.
		{"empty", "", `line 1: header: empty input: want a JSON object such as {"format":"tlcheck-trace","version":1}`, 1, -1, ""},
		{"blank", "\n \n", `line 3: header: empty input: want a JSON object such as {"format":"tlcheck-trace","version":1}`, 3, -1, ""},
		{"not an object", `[1]`, `line 1: header: want a JSON object such as {"format":"tlcheck-trace","version":1}, got '['`, 1, -1, ""},
		{"no format", `{"version":1}`, `line 1: header: field "format": missing: a trace's header needs "format":"tlcheck-trace" and "version":1`, 1, -1, "format"},
		{"no version", `{"format":"tlcheck-trace"}`, `line 1: header: field "version": missing: a trace's header needs "format":"tlcheck-trace" and "version":1`, 1, -1, "version"},
		{"wrong format", `{"format":"tlcheck","version":1}`, `line 1: header: field "format": want "tlcheck-trace", got "tlcheck"`, 1, -1, "format"},
		{"format not a string", `{"format":1,"version":1}`, `line 1: header: field "format": want "tlcheck-trace", got 1`, 1, -1, "format"},
		{"version 2", `{"format":"tlcheck-trace","version":2}`, `line 1: header: field "version": want 1, got 2: this reader reads version 1 of the format`, 1, -1, "version"},
		{"version string", `{"format":"tlcheck-trace","version":"1"}`, `line 1: header: field "version": want 1, got "1"`, 1, -1, "version"},
		{"effects string", `{"format":"tlcheck-trace","version":1,"effects":"yes"}`, `line 1: header: field "effects": want true or false, got "yes"`, 1, -1, "effects"},
		{"source number", `{"format":"tlcheck-trace","version":1,"source":7}`, `line 1: header: field "source": want a string, got 7`, 1, -1, "source"},
		{"header on two lines", "{\"format\":\"tlcheck-trace\",\n\"version\":1}\n", `line 2: header: a stream's header is one line (a document has an "events" array)`, 2, -1, ""},
		{"after the header", plainHeader + ` {"op":"end"}`, `line 1: header: invalid JSON Lines: unexpected '{' after the header: a stream has one JSON value a line`, 1, -1, ""},
		{"trailing comma in header", `{"format":"tlcheck-trace","version":1,}`, `line 1: header: invalid JSON: want a field name in double quotes, got '}'`, 1, -1, ""},

		// The document layout.
		{"events not an array", `{"format":"tlcheck-trace","version":1,"events":{}}`, `line 1: header: field "events": want an array of events, got an object`, 1, -1, "events"},
		{"effects after events", `{"format":"tlcheck-trace","version":1,"events":[{"op":"end"}],"effects":true}`, `line 1: header: field "effects": comes after "events" and changes how they read; write it before "events"`, 1, -1, "effects"},
		{"two events arrays", `{"format":"tlcheck-trace","version":1,"events":[],"events":[]}`, `line 1: header: field "events": a document has one events array`, 1, -1, "events"},
		{"after the document", `{"format":"tlcheck-trace","version":1,"events":[{"op":"end"}]}` + "\n x", `line 2: event 1: invalid JSON: unexpected 'x' after the end of the document`, 2, 1, ""},
		{"document cut short", `{"format":"tlcheck-trace","version":1,"events":[{"op":"end"}`, `line 1: event 1: invalid JSON: want , or ] after an event, got end of input`, 1, 1, ""},
		{"document no closing brace", `{"format":"tlcheck-trace","version":1,"events":[]`, `line 1: event 0: invalid JSON: want , or } after the events, got end of input`, 1, 0, ""},
		{"document missing comma", `{"format":"tlcheck-trace","version":1,"events":[{"op":"end"} {"op":"end"}]}`, `line 1: event 1: invalid JSON: want , or ] after an event, got '{'`, 1, 1, ""},
		{"document trailing comma", "{\"format\":\"tlcheck-trace\",\"version\":1,\"events\":[\n{\"op\":\"end\"},\n]}", `line 3: event 1: invalid JSON: want an event object, got ']'`, 3, 1, ""},
		{"document event not an object", `{"format":"tlcheck-trace","version":1,"events":[1]}`, `line 1: event 0: invalid JSON: want an event object, got '1'`, 1, 0, ""},
		{"header last, bad format", `{"events":[],"format":"x","version":1}`, `line 1: header: field "format": want "tlcheck-trace", got "x"`, 1, -1, "format"},
		{"header last, missing version", `{"events":[],"format":"tlcheck-trace"}`, `line 1: header: field "version": missing: a trace's header needs "format":"tlcheck-trace" and "version":1`, 1, -1, "version"},
		{"header last, bad event syntax", "{\"events\":[{\"op\":\"end\"},\n{\"op\":\"end\",}],\"format\":\"tlcheck-trace\",\"version\":1}", `line 2: event 1: invalid JSON: want a field name in double quotes, got '}'`, 2, 1, ""},
		{"header last, bad event field", "{\"events\":[{\"op\":\"end\"},\n{\"op\":\"free\",\"addr\":-1}],\"format\":\"tlcheck-trace\",\"version\":1}", `line 2: event 1: field "addr": want a hex string or a non-negative integer, got -1`, 2, 1, "addr"},

		// Ops and required fields.
		{"unknown op", h + `{"op":"mallocc","addr":"0x10","size":8}`, `line 2: event 0: field "op": unknown op "mallocc"`, 2, 0, "op"},
		{"no op", h + `{"addr":"0x10"}`, `line 2: event 0: field "op": missing: every event needs an op`, 2, 0, "op"},
		{"empty event", h + `{}`, `line 2: event 0: field "op": missing: every event needs an op`, 2, 0, "op"},
		{"op not a string", h + `{"op":3}`, `line 2: event 0: field "op": want a string, got 3`, 2, 0, "op"},
		{"op null", h + `{"op":null}`, `line 2: event 0: field "op": want a string, got null`, 2, 0, "op"},
		{"missing size", h + `{"op":"malloc","addr":"0x10"}`, `line 2: event 0: field "size": missing: malloc needs addr, size`, 2, 0, "size"},
		{"missing addr first", h + `{"op":"arena_get","size":8}`, `line 2: event 0: field "slot": missing: arena_get needs slot, addr, size`, 2, 0, "slot"},
		{"missing name", h + `{"op":"param_register","addr":"0x10"}`, `line 2: event 0: field "name": missing: param_register needs name, addr`, 2, 0, "name"},
		{"missing fields", h + `{"op":"struct_init","addr":"0x10","size":8}`, `line 2: event 0: field "fields": missing: struct_init needs addr, size, fields`, 2, 0, "fields"},
		{"missing new_addr", h + `{"op":"realloc","addr":"0x10","size":8}`, `line 2: event 0: field "new_addr": missing: realloc needs addr, new_addr, size`, 2, 0, "new_addr"},
		{"missing slots", h + `{"op":"fn_enter"}`, `line 2: event 0: field "slots": missing: fn_enter needs slots`, 2, 0, "slots"},
		{"required null", h + `{"op":"free","addr":null}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got null`, 2, 0, "addr"},
		{"second event", h + `{"op":"end"}` + "\n\n" + `{"op":"free"}`, `line 4: event 1: field "addr": missing: free needs addr`, 4, 1, "addr"},

		// Values.
		{"addr bool", h + `{"op":"free","addr":true}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got true`, 2, 0, "addr"},
		{"addr decimal string", h + `{"op":"free","addr":"4096"}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got "4096"`, 2, 0, "addr"},
		{"addr empty hex", h + `{"op":"free","addr":"0x"}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got "0x"`, 2, 0, "addr"},
		{"addr bad hex", h + `{"op":"free","addr":"0x12g"}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got "0x12g"`, 2, 0, "addr"},
		{"addr hex over 64 bits", h + `{"op":"free","addr":"0x10000000000000000"}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got "0x10000000000000000" (over 64 bits)`, 2, 0, "addr"},
		{"addr over 64 bits", h + `{"op":"free","addr":18446744073709551616}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got 18446744073709551616 (over 64 bits)`, 2, 0, "addr"},
		{"addr negative", h + `{"op":"free","addr":-1}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got -1`, 2, 0, "addr"},
		{"addr fraction", h + `{"op":"free","addr":1.5}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got 1.5`, 2, 0, "addr"},
		{"addr object", h + `{"op":"free","addr":{"hex":"0x10"}}`, `line 2: event 0: field "addr": want a hex string or a non-negative integer, got an object`, 2, 0, "addr"},
		{"size negative", h + `{"op":"malloc","addr":"0x10","size":-1}`, `line 2: event 0: field "size": want a non-negative integer, got -1`, 2, 0, "size"},
		{"size fraction", h + `{"op":"malloc","addr":"0x10","size":1.5}`, `line 2: event 0: field "size": want a non-negative integer, got 1.5`, 2, 0, "size"},
		{"size small exponent", h + `{"op":"malloc","addr":"0x10","size":15e-1}`, `line 2: event 0: field "size": want a non-negative integer, got 15e-1`, 2, 0, "size"},
		{"size over 64 bits", h + `{"op":"malloc","addr":"0x10","size":1e20}`, `line 2: event 0: field "size": want a non-negative integer, got 1e20 (over 64 bits)`, 2, 0, "size"},
		{"size string", h + `{"op":"malloc","addr":"0x10","size":"8"}`, `line 2: event 0: field "size": want a non-negative integer, got "8"`, 2, 0, "size"},
		{"size array", h + `{"op":"malloc","addr":"0x10","size":[8]}`, `line 2: event 0: field "size": want a non-negative integer, got an array`, 2, 0, "size"},
		{"slots over 31 bits", h + `{"op":"fn_enter","slots":2147483648}`, `line 2: event 0: field "slots": want a non-negative integer up to 2147483647, got 2147483648`, 2, 0, "slots"},
		{"slot negative", h + `{"op":"arena_get","slot":-1,"addr":"0x10","size":8}`, `line 2: event 0: field "slot": want a non-negative integer up to 2147483647, got -1`, 2, 0, "slot"},
		{"t fraction", h + `{"op":"end","t":1.5}`, `line 2: event 0: field "t": want an integer, got 1.5`, 2, 0, "t"},
		{"t over 64 bits", h + `{"op":"end","t":9223372036854775808}`, `line 2: event 0: field "t": want an integer, got 9223372036854775808 (over 64 bits)`, 2, 0, "t"},
		{"t string", h + `{"op":"end","t":"5"}`, `line 2: event 0: field "t": want an integer, got "5"`, 2, 0, "t"},
		{"thread fraction", h + `{"op":"end","thread":1.5}`, `line 2: event 0: field "thread": want a string or an integer, got 1.5`, 2, 0, "thread"},
		{"thread bool", h + `{"op":"end","thread":false}`, `line 2: event 0: field "thread": want a string or an integer, got false`, 2, 0, "thread"},
		{"space", h + `{"op":"read","addr":"0x10","space":"gpu"}`, `line 2: event 0: field "space": want "heap" or "device", got "gpu"`, 2, 0, "space"},
		{"fields not an array", h + `{"op":"struct_init","addr":"0x10","size":8,"fields":"0x1"}`, `line 2: event 0: field "fields": want an array of addresses, got "0x1"`, 2, 0, "fields"},
		{"fields bad element", h + `{"op":"struct_init","addr":"0x10","size":8,"fields":["0x1",true]}`, `line 2: event 0: field "fields": want a hex string or a non-negative integer, got true`, 2, 0, "fields"},
		{"fields trailing comma", h + `{"op":"struct_init","addr":"0x10","size":8,"fields":["0x1",]}`, `line 2: event 0: field "fields": invalid JSON: want a value, got ']'`, 2, 0, "fields"},
		{"site number", h + `{"op":"end","site":5}`, `line 2: event 0: field "site": want a string, got 5`, 2, 0, "site"},
		{"kind number", h + `{"op":"alloc","addr":"0x10","size":8,"kind":1}`, `line 2: event 0: field "kind": want a string, got 1`, 2, 0, "kind"},
		{"unused field, wrong type", h + `{"op":"free","addr":"0x10","size":"big"}`, `line 2: event 0: field "size": want a non-negative integer, got "big"`, 2, 0, "size"},
		{"long value", h + `{"op":"end","site":` + strings.Repeat("1", 50) + `}`, `line 2: event 0: field "site": want a string, got 1111111111111111111111111111111111111111...`, 2, 0, "site"},

		// JSON syntax.
		{"bad escape", h + `{"op":"end","site":"a\x"}`, `line 2: event 0: field "site": invalid JSON: want an escape (\" \\ \/ \b \f \n \r \t \uXXXX), got 'x'`, 2, 0, "site"},
		{"bad \\u", h + `{"op":"end","site":"\u12G4"}`, `line 2: event 0: field "site": invalid JSON: want four hex digits after \u, got 'G'`, 2, 0, "site"},
		{"raw tab in string", h + "{\"op\":\"end\",\"site\":\"a\tb\"}", `line 2: event 0: field "site": invalid JSON: want a character of a string (control characters must be escaped), got byte 0x09`, 2, 0, "site"},
		{"raw newline in string", h + "{\"op\":\"end\",\"site\":\"a\nb\"}", `line 2: event 0: field "site": invalid JSON: want a character of a string (control characters must be escaped), got end of line`, 2, 0, "site"},
		{"not UTF-8", h + "{\"op\":\"end\",\"site\":\"a\xffb\"}", `line 2: event 0: field "site": invalid JSON: a string holds bytes that are not UTF-8`, 2, 0, "site"},
		{"unquoted key", h + `{op:"end"}`, `line 2: event 0: invalid JSON: want a field name in double quotes, got 'o'`, 2, 0, ""},
		{"missing colon", h + `{"op" "end"}`, `line 2: event 0: invalid JSON: want ':', got '"'`, 2, 0, ""},
		{"trailing comma", h + `{"op":"end",}`, `line 2: event 0: invalid JSON: want a field name in double quotes, got '}'`, 2, 0, ""},
		{"missing comma", h + `{"op":"end" "t":1}`, `line 2: event 0: invalid JSON: want , or }, got '"'`, 2, 0, ""},
		{"cut short", h + `{"op":"end"`, `line 2: event 0: invalid JSON: want , or }, got end of input`, 2, 0, ""},
		{"cut short in string", h + `{"op":"end","site":"ab`, `line 2: event 0: field "site": unexpected end of input`, 2, 0, "site"},
		{"bad literal", h + `{"op":"end","x":tru}`, `line 2: event 0: invalid JSON: want true, false or null`, 2, 0, ""},
		{"bad literal in a known field", h + `{"op":"end","site":nul}`, `line 2: event 0: field "site": invalid JSON: want true, false or null`, 2, 0, "site"},
		{"leading zero", h + `{"op":"malloc","addr":"0x10","size":08}`, `line 2: event 0: field "size": invalid JSON: malformed number 08`, 2, 0, "size"},
		{"plus sign", h + `{"op":"malloc","addr":"0x10","size":+8}`, `line 2: event 0: field "size": invalid JSON: want a value, got '+'`, 2, 0, "size"},
		{"bare dot", h + `{"op":"malloc","addr":"0x10","size":1.}`, `line 2: event 0: field "size": invalid JSON: malformed number 1.`, 2, 0, "size"},
		{"unknown field bad value", h + `{"op":"end","x":[1,}`, `line 2: event 0: invalid JSON: want a value, got '}'`, 2, 0, ""},
		{"unknown field too deep", h + `{"op":"end","x":` + deep + `}`, `line 2: event 0: invalid JSON: values nest deeper than 1000 levels`, 2, 0, ""},
		{"two events on a line", h + `{"op":"end"} {"op":"end"}`, `line 2: event 0: invalid JSON Lines: unexpected '{' after the event: a stream has one JSON value a line`, 2, 0, ""},
		{"event over two lines", h + "{\"op\":\"end\",\n\"t\":1}", `line 2: event 0: invalid JSON: want a field name in double quotes, got end of line`, 2, 0, ""},
		{"not an object", h + `[{"op":"end"}]`, `line 2: event 0: invalid JSON: want an event object (a stream has one JSON object a line), got '['`, 2, 0, ""},
		{"byte order mark", "\ufeff" + plainHeader, `line 1: header: the input starts with a UTF-8 byte-order mark (bytes EF BB BF), which a trace may not have: save the file as UTF-8 without one`, 1, -1, ""},
		{"byte order mark before a document", "\ufeff" + `{"format":"tlcheck-trace","version":1,"events":[]}`, `line 1: header: the input starts with a UTF-8 byte-order mark (bytes EF BB BF), which a trace may not have: save the file as UTF-8 without one`, 1, -1, ""},
		{"first byte of a mark alone", "\xef" + plainHeader, `line 1: header: want a JSON object such as {"format":"tlcheck-trace","version":1}, got byte 0xef`, 1, -1, ""},
		{"a mark cut short", "\xef\xbb", `line 1: header: want a JSON object such as {"format":"tlcheck-trace","version":1}, got byte 0xef`, 1, -1, ""},
	} {
		for how, in := range inputs([]byte(tt.text)) {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				_, _, _, err := readAll(in())
				var te *Error
				if !errors.As(err, &te) {
					t.Fatalf("got %v, want an *Error", err)
				}
				if got := err.Error(); got != tt.want {
					t.Errorf("error\n got %s\nwant %s", got, tt.want)
				}
				if te.Line != tt.line || te.Event != tt.ev || te.Field != tt.field || te.File != "" {
					t.Errorf("place: line %d, event %d, field %q; want line %d, event %d, field %q",
						te.Line, te.Event, te.Field, tt.line, tt.ev, tt.field)
				}
			})
		}
	}
}

// TestErrorMessage checks how an Error names its place.
func TestErrorMessage(t *testing.T) {
	err := errors.New("want a hex string or a non-negative integer, got true")
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{File: "trace.jsonl", Line: 12, Event: 10, Field: "addr", Err: err}, `trace.jsonl:12: event 10: field "addr": want a hex string or a non-negative integer, got true`},
		{Error{Line: 12, Event: 10, Field: "addr", Err: err}, `line 12: event 10: field "addr": want a hex string or a non-negative integer, got true`},
		{Error{File: "t.json", Event: 0, Err: err}, `t.json: event 0: want a hex string or a non-negative integer, got true`},
		{Error{Event: 3, Err: err}, `event 3: want a hex string or a non-negative integer, got true`},
		{Error{File: "t.json", Line: 1, Event: -1, Field: "version", Err: errors.New("want 1, got 2")}, `t.json:1: header: field "version": want 1, got 2`},
		{Error{Line: 1, Event: -1}, `line 1: header: unreadable input`},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error()\n got %s\nwant %s", got, tt.want)
		}
	}
}
