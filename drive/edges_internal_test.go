package drive

import (
	"strings"
	"testing"
)

// TestHelloProblemsNamed: a hello that is not one is refused in the
// protocol's words, naming the field or the byte, never with encoding/json's
// Go-typed message.
func TestHelloProblemsNamed(t *testing.T) {
	for _, tc := range []struct {
		line string
		says string
	}{
		{"\xef\xbb\xbf" + `{"protocol":"tlcheck-drive","version":1,"layers":[2]}`, "byte-order mark"},
		{`{"protocol":"tlcheck-drive","version":1e400,"layers":[2]}`, `"version": number 1e400, want an integer`},
		{`{"protocol":"tlcheck-drive","version":1,"layers":[99999999999999999999]}`, `"layers": number 99999999999999999999, want an integer`},
		{`{"protocol":"tlcheck-drive","version":"1","layers":[2]}`, `"version": string, want an integer`},
		{`{"protocol":"tlcheck-drive",`, "not JSON at byte"},
	} {
		_, err := parseHello([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "'ï'") {
			t.Errorf("parseHello(%q) = %v, want an error saying %q", tc.line, err, tc.says)
		}
	}
}

// TestCallsFileLongLine: a calls file's line over the bound is named as
// such, with its line, not as bufio's "token too long".
func TestCallsFileLongLine(t *testing.T) {
	text := `{"op":"scope_enter"}` + "\n" + `{"op":"param_release","name":"` + strings.Repeat("x", 10<<20) + `"}` + "\n"
	_, err := ReadCalls(strings.NewReader(text))
	if err == nil || !strings.Contains(err.Error(), "line 2: longer than 1048576 bytes") || strings.Contains(err.Error(), "token too long") {
		t.Errorf("ReadCalls of a 10 MB line: %v", err)
	}
}
