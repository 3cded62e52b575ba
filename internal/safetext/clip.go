package safetext

import "unicode/utf8"

// ClipBytes is the most of an input Clip keeps.
const ClipBytes = 80

// Clip shortens s, user input that a message echoes back, to a readable
// length: at most ClipBytes bytes of it, followed by "..." when anything
// was cut. The cut falls on a rune's boundary, so that a valid string
// stays valid; a string of ClipBytes bytes or fewer is returned as it is.
func Clip(s string) string {
	if len(s) <= ClipBytes {
		return s
	}
	cut := ClipBytes
	for cut > ClipBytes-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
