package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

func TestWriter(t *testing.T) {
	tests := []struct {
		name   string
		commit bool
		want   string // the target's contents after; "" is the old contents
	}{
		{"commit replaces the file", true, "new\n"},
		{"abort leaves it as it was", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.json")
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := atomicfile.NewWriter(path)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort() // a no-op after Commit
			if _, err := w.Write([]byte("new\n")); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != "old\n" {
				t.Errorf("before the end the target holds %q, want the old contents", got)
			}
			want := "old\n"
			if tc.commit {
				if err := w.Commit(); err != nil {
					t.Fatal(err)
				}
				want = tc.want
			} else {
				w.Abort()
			}
			if got, _ := os.ReadFile(path); string(got) != want {
				t.Errorf("target holds %q, want %q", got, want)
			}
			assertOnly(t, dir, "out.json")
		})
	}
}

func TestWriterMissingDir(t *testing.T) {
	if _, err := atomicfile.NewWriter(filepath.Join(t.TempDir(), "no", "out.json")); err == nil {
		t.Error("NewWriter into a missing directory succeeded")
	}
}
