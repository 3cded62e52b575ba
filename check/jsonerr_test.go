package check

import (
	"strings"
	"testing"
)

// TestParseBaselineErrors: a baseline that is not one is refused in the
// file's terms (where, which field, what was wanted), never with
// encoding/json's words for Go's types, and a byte that is not text is
// shown as its value, not as a Latin-1 letter.
func TestParseBaselineErrors(t *testing.T) {
	const head = `{"format":"tlcheck-baseline","version":1,"traces":[`
	tests := []struct {
		name, text string
		want       string
	}{
		{"empty", "", "the file is empty"},
		{"blank", " \n", "the file is empty"},
		{"truncated", head, "line 1, column 52: the JSON ends before its value does"},
		{"a byte-order mark", "\xef\xbb\xbf" + head + "]}", "byte-order mark (bytes EF BB BF)"},
		{"a byte that is not text", "{\n\xff}", "line 2, column 1: invalid JSON: byte 0xff"},
		{"a negative size", head + `{"trace":"t","leaked_bytes":-5}]}`, "field traces.leaked_bytes: got number -5, want a whole number from 0 to 18446744073709551615"},
		{"a string for a count", head + `{"trace":"t","findings":[{"kind":"leak","count":"2"}]}]}`, "field traces.findings.count: got string, want a whole number"},
		{"not an object", "[]", "line 1, column 2: got array, want an object"},
		{"unknown field", head + "], \"x\": 1}", `unknown field "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseBaseline(strings.NewReader(tt.text))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("%q, want it to contain %q", msg, tt.want)
			}
			for _, raw := range []string{"EOF", "json:", "Go struct", "uint64", "'ï'", "\xef", "\xff"} {
				if strings.Contains(msg, raw) {
					t.Errorf("%q shows %q", msg, raw)
				}
			}
		})
	}
}
