package safetext

import "unicode/utf8"

// ClipBytes is the most of an input Clip keeps.
const ClipBytes = 80

// Clip shortens s, user input that a message echoes back, to a readable
// length: at most ClipBytes bytes of it, followed by "..." when anything
// was cut. The cut falls on a rune's boundary, so that a valid string
// stays valid; a string of ClipBytes bytes or fewer is returned as it is.
func Clip(s string) string { return ClipAt(s, ClipBytes) }

// ClipAt is Clip keeping at most n bytes: the one clipping of every
// message and listing that shows an input cut short.
func ClipAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut > n-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
