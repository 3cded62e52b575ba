package execfuzz

import (
	"slices"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		`./drv -x`:                 {"./drv", "-x"},
		`'a b' "c \"d\"" e\ f`:     {"a b", `c "d"`, "e f"},
		`  spaced   out  `:         {"spaced", "out"},
		`python3 -c 'print("hi")'`: {"python3", "-c", `print("hi")`},
		`x''`:                      {"x"},
		`''`:                       {""},
		`python3 /tmp/drïver.py`:   {"python3", "/tmp/drïver.py"}, // bytes, not runes one by one
		`'ünï cödé' "ß\"x" é\ è`:   {"ünï cödé", `ß"x`, "é è"},
	} {
		got, err := SplitWords(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
