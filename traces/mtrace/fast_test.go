package mtrace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tlcheck/tlcheck/traces"
)

// fastLines are lines near the edge of what parseFast takes.
var fastLines = []string{
	"@ ./p:(main+0x1)[0x2] + 0x10 0x20",
	"@ ./p:(main+0x1)[0x2] - 0x10",
	"@ ./p:[0x2] < 0xABCdef",
	"@ [0x2] > 0x10 0",
	"+ 0x10 0x20",
	"- 0x10",
	"+ 0x0 0x20",
	"+ (nil) 0x20",
	"+ 0x10 0x20 ",
	"+ 0x10  0x20",
	"+ 0x10 0x20 0x30",
	"+ 0x10",
	"+ 0x10 ",
	"- 0x10 0x8",
	"- 0x",
	"- 0x10\t",
	"@ a\tb + 0x10 0x20",
	"@ a\x01b + 0x10 0x20",
	"@  a + 0x10 0x20",
	"@ a  + 0x10 0x20",
	"@ a + 0x10 0x20\x00",
	"@ a ! 0x10 0x20",
	"@ a = 0x10 0x20",
	"@ a * 0x10 0x20",
	"@ a +  0x10 0x20",
	"@ a ++ 0x10 0x20",
	"+ 0x00000000000000010 0x1",
	"+ 0x10000000000000000 0x1",
	"+ 0x10 0x00000000000000001",
	"+ 0x10 0xg",
	"@ \xff\xfe + 0x10 0x20",
}

// TestParseFastAgrees holds the fast path to the general one: whatever
// line it takes, it reads as parse does.
func TestParseFastAgrees(t *testing.T) {
	for _, line := range fastLines {
		checkFastAgrees(t, line)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, line := range fastLines {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return // one line at a time
		}
		checkFastAgrees(t, line)
	})
}

func checkFastAgrees(t *testing.T, line string) {
	t.Helper()
	var fast, slow traces.Event
	if !NewReader(nil).parseFast([]byte(line), &fast) {
		return
	}
	ok, err := NewReader(nil).parse([]byte(line), &slow)
	if err != nil || !ok {
		t.Fatalf("%q: fast path read %+v, general path: yields %v, error %v", line, fast, ok, err)
	}
	if diff := cmp.Diff(slow, fast); diff != "" {
		t.Fatalf("%q: paths disagree (-general +fast):\n%s", line, diff)
	}
}
