package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.md")
	for _, want := range []string{"first\n", "second\n"} {
		if err := atomicfile.Replace(path, []byte(want)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("after Replace: %q, want %q", got, want)
		}
	}
	assertOnly(t, dir, "report.md")
}

func TestReplaceMissingDir(t *testing.T) {
	if err := atomicfile.Replace(filepath.Join(t.TempDir(), "no", "such.md"), nil); err == nil {
		t.Error("Replace into a missing directory succeeded")
	}
}

func TestCreateNewNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "crash.jsonl")
	if err := os.WriteFile(mine, []byte("the user's own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"crash-2.jsonl", "crash-3.jsonl"} {
		path, err := atomicfile.CreateNew(dir, "crash", ".jsonl", []byte{byte('a' + i)})
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(path) != want {
			t.Errorf("CreateNew #%d wrote %s, want %s", i+1, filepath.Base(path), want)
		}
	}
	if got, _ := os.ReadFile(mine); string(got) != "the user's own\n" {
		t.Errorf("the existing file now holds %q", got)
	}
	assertOnly(t, dir, "crash-2.jsonl", "crash-3.jsonl", "crash.jsonl")
}

// assertOnly fails unless dir holds exactly names: no temporary file left.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("dir holds %v, want %v", got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("dir holds %v, want %v", got, names)
		}
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "read-only")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		ok   bool
		skip bool
	}{
		{"writable directory", dir, true, false},
		{"missing", filepath.Join(dir, "no", "such"), false, false},
		{"a file", file, false, false},
		// root writes anywhere: the permission check cannot fail for it.
		{"read-only directory", readOnly, false, os.Geteuid() == 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip {
				t.Skip("running as root, which may write into a read-only directory")
			}
			err := atomicfile.CheckDir(tt.dir)
			if (err == nil) != tt.ok {
				t.Errorf("CheckDir(%s) = %v, want ok %v", tt.dir, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tt.dir) {
				t.Errorf("error %q does not name %s", err, tt.dir)
			}
		})
	}
	assertOnly(t, dir, "a-file", "read-only")
}
