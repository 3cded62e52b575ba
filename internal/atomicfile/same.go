package atomicfile

import (
	"os"
	"path/filepath"
)

// SameFile reports whether a and b name the same file: the same path once
// cleaned, or one existing file under two names (a link, a path through
// another directory). A command checks it before it writes, so that an
// output never replaces one of its inputs.
func SameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
