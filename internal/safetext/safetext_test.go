package safetext

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a.c:12", "a.c:12"},
		{"ünïcode/日本.go:3", "ünïcode/日本.go:3"},
		{"with space and \"quotes\" \\", "with space and \"quotes\" \\"},
		{"\u001b[2J\u001b]0;pwned\u0007", `\x1b[2J\x1b]0;pwned\a`},
		{"nul\u0000here", `nul\x00here`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"line\nbreak\ttab\rcr", `line\nbreak\ttab\rcr`},
		{"del\x7f c1\u009b[31m", `del\x7f c1\u009b[31m`},
		{"bidi\u202eevil", `bidi\u202eevil`},
	}
	for _, tt := range tests {
		got := Escape(tt.in)
		if got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(got) || firstBad(got) != len(got) {
			t.Errorf("Escape(%q) = %q is not safe", tt.in, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Escape("an/ordinary/site.go:12") }); n != 0 {
		t.Errorf("Escape of a clean string allocates %v times", n)
	}
}

func TestJSON(t *testing.T) {
	for _, s := range []string{"plain", "\u001b[2J\u001b]0;pwned\u0007", "nul\u0000", "bad\xff", "del\x7f", "csi\u009b31m", "é\u0085"} {
		b, err := json.Marshal(map[string]string{"site": s})
		if err != nil {
			t.Fatal(err)
		}
		safe := JSON(b)
		for i, c := range safe {
			if c < 0x20 || c == 0x7f || c == 0xc2 && i+1 < len(safe) && safe[i+1] < 0xa0 {
				t.Errorf("%q: JSON left byte %#x raw: %q", s, c, safe)
			}
		}
		var back, want map[string]string
		json.Unmarshal(b, &want)
		if err := json.Unmarshal(safe, &back); err != nil || back["site"] != want["site"] {
			t.Errorf("%q: %q reads back as %q (%v), want %q", s, safe, back["site"], err, want["site"])
		}
	}
}
