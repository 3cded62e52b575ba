package traces

import (
	"os"
	"strings"
	"testing"
)

// TestFormatExamples reads every example trace in FORMAT.md, so that the
// specification cannot show a trace the Reader rejects: whole traces (a
// header first; "  #" starts a comment there, not part of the file) and
// lists of events, read after a header.
func TestFormatExamples(t *testing.T) {
	md, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	var cur []string
	inBlock := false
	for line := range strings.SplitSeq(string(md), "\n") {
		if strings.HasPrefix(line, "```") {
			if inBlock {
				blocks = append(blocks, cur)
			}
			inBlock, cur = !inBlock, nil
			continue
		}
		if inBlock {
			cur = append(cur, line)
		}
	}
	traces, events := 0, 0
	for _, b := range blocks {
		if len(b) == 0 || !strings.HasPrefix(b[0], "{") {
			continue
		}
		text := strings.Join(b, "\n")
		switch {
		case strings.Contains(b[0], `"tlcheck-trace"`):
			traces++
			for i, line := range b {
				if cut, _, ok := strings.Cut(line, "  #"); ok {
					b[i] = cut
				}
			}
			text = strings.Join(b, "\n")
		case strings.HasPrefix(b[0], `{"op"`):
			events++
			text = plainHeader + "\n" + text
		default:
			continue // a report, not a trace
		}
		if _, evs, _, err := readAll(strings.NewReader(text)); err != nil || len(evs) == 0 {
			t.Errorf("FORMAT.md example\n%s\nreads %d events, error %v", text, len(evs), err)
		}
	}
	if traces < 12 || events < 4 {
		t.Errorf("found %d example traces and %d event lists in FORMAT.md; want at least 12 and 4", traces, events)
	}
}

// TestFormatDocumentsEveryKind: each violation kind has its section under
// FORMAT.md's Violations, and the count of kinds there is the count of
// Kinds.
func TestFormatDocumentsEveryKind(t *testing.T) {
	md, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds() {
		if !strings.Contains(string(md), "\n### `"+string(k)+"`") {
			t.Errorf("kind %s: FORMAT.md's Violations has no section \"### `%s`\"", k, k)
		}
	}
	words := []string{"", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	flat := strings.Join(strings.Fields(string(md)), " ")
	if n := len(Kinds()); n >= len(words) || !strings.Contains(flat, "Its kind is one of "+words[n]+" fixed strings") {
		t.Errorf("FORMAT.md does not say \"Its kind is one of %s fixed strings\" (%d kinds)", words[min(n, len(words)-1)], n)
	}
}
