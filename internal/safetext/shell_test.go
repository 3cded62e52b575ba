package safetext

import "testing"

func TestShellQuote(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"a/b-1.jsonl", "a/b-1.jsonl"},
		{"my dir/x", "'my dir/x'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
		{"a=b", "'a=b'"},
		{"drïver.py", "'drïver.py'"},
	} {
		if got := ShellQuote(tt.in); got != tt.want {
			t.Errorf("ShellQuote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
