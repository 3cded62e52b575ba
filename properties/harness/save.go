package harness

import (
	"strings"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/safetext"
)

// Save writes a counterexample to a new file in dir named base+ext, or
// base-2+ext, base-3+ext, ... where that name is taken, atomically, and
// returns its path: a file that is there is never replaced, and no reader
// ever sees half a file.
func Save(dir, base, ext string, data []byte) (string, error) {
	return atomicfile.CreateNew(dir, base, ext, data)
}

// Reproduce is the line that says how to see a failure again: "reproduce:
// tlcheck " and the words of the command, each quoted for a POSIX shell
// where it needs it, so that a user can paste it.
func Reproduce(words ...string) string {
	return "reproduce: " + Command(words...)
}

// Command is "tlcheck" and the words, each quoted for a POSIX shell where
// it needs it.
func Command(words ...string) string {
	var b strings.Builder
	b.WriteString("tlcheck")
	for _, w := range words {
		b.WriteByte(' ')
		b.WriteString(safetext.ShellQuote(w))
	}
	return b.String()
}
