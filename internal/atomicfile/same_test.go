package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a, other := filepath.Join(dir, "a"), filepath.Join(dir, "other")
	for _, p := range []string{a, other} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{a, a, true},
		{a, filepath.Join(dir, ".", "sub", "..", "a"), true},
		{a, link, true},
		{"missing", "./missing", true}, // the same path, though not there
		{a, other, false},
		{a, filepath.Join(dir, "missing"), false},
	} {
		if got := SameFile(c.a, c.b); got != c.same {
			t.Errorf("SameFile(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
