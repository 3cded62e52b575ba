package safetext

import "strings"

// ShellQuote quotes s for a POSIX shell command line that a user can
// paste: as it is where every byte is one a shell leaves alone (letters,
// digits and -_./+), else in single quotes, each quote inside closed,
// escaped and opened again.
// The one quoting of every command line tlcheck prints or writes.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
