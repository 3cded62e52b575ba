package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	long := strings.Repeat("a", ClipBytes)
	for _, c := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"short", "mtrace", "mtrace"},
		{"exactly the bound", long, long},
		{"one byte over", long + "b", long + "..."},
		{"far over", long + strings.Repeat("z", 1000), long + "..."},
		// "é" is two bytes: at bytes 79 and 80 it would be cut in two.
		{"a rune across the bound", long[:ClipBytes-1] + "é" + "tail", long[:ClipBytes-1] + "..."},
		// "€" is three bytes, at bytes 78 to 80: it ends past the bound.
		{"a three-byte rune across the bound", long[:ClipBytes-2] + "€" + "tail", long[:ClipBytes-2] + "..."},
		{"a rune that ends at the bound", long[:ClipBytes-2] + "é" + "tail", long[:ClipBytes-2] + "é..."},
		// A string that is not UTF-8 is cut at the bound, as bytes.
		{"invalid UTF-8", strings.Repeat("\xff", ClipBytes+5), strings.Repeat("\xff", ClipBytes) + "..."},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Clip(c.in)
			if got != c.want {
				t.Fatalf("Clip(%q) = %q, want %q", c.in, got, c.want)
			}
			if len(strings.TrimSuffix(got, "...")) > ClipBytes {
				t.Fatalf("Clip(%q) keeps %d bytes, more than %d", c.in, len(got)-3, ClipBytes)
			}
			if utf8.ValidString(c.in) && !utf8.ValidString(got) {
				t.Fatalf("Clip(%q) = %q: a valid string made invalid", c.in, got)
			}
		})
	}
}

// TestClipAt: ClipAt is Clip at any bound.
func TestClipAt(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdef", 3, "abc..."},
		{"ab\u00e9def", 3, "ab..."}, // é across the bound
		{"abc", 0, "..."},
	} {
		if got := ClipAt(c.in, c.n); got != c.want {
			t.Errorf("ClipAt(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
