package atomicfile_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// TestReplaceKeepsWhatTheUserMade: replacing a file writes through a
// symbolic link, keeps the file's permissions and refuses a read-only
// file, leaving it as it was; Replace and NewWriter alike.
func TestReplaceKeepsWhatTheUserMade(t *testing.T) {
	writers := map[string]func(path string, data []byte) error{
		"Replace": atomicfile.Replace,
		"NewWriter": func(path string, data []byte) error {
			w, err := atomicfile.NewWriter(path)
			if err != nil {
				return err
			}
			defer w.Abort()
			w.Write(data)
			return w.Commit()
		},
	}
	tests := []struct {
		name  string
		setup func(dir string) string // makes the files; returns the path to replace
		check func(t *testing.T, dir string, err error)
	}{
		{"a relative link is written through", func(dir string) string {
			os.WriteFile(filepath.Join(dir, "real.json"), []byte("old"), 0o644)
			os.Symlink("real.json", filepath.Join(dir, "link.json"))
			return filepath.Join(dir, "link.json")
		}, func(t *testing.T, dir string, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if st, _ := os.Lstat(filepath.Join(dir, "link.json")); st.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link became a %v", st.Mode())
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "real.json")); string(got) != "new" {
				t.Errorf("the link's target holds %q", got)
			}
		}},
		{"a link to a file not made yet makes it", func(dir string) string {
			os.Symlink("later.json", filepath.Join(dir, "link.json"))
			return filepath.Join(dir, "link.json")
		}, func(t *testing.T, dir string, err error) {
			if got, _ := os.ReadFile(filepath.Join(dir, "later.json")); err != nil || string(got) != "new" {
				t.Errorf("%v; the target holds %q", err, got)
			}
		}},
		{"permissions are kept", func(dir string) string {
			os.WriteFile(filepath.Join(dir, "private.json"), []byte("old"), 0o600)
			return filepath.Join(dir, "private.json")
		}, func(t *testing.T, dir string, err error) {
			st, _ := os.Stat(filepath.Join(dir, "private.json"))
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("%v; mode %v, want 0600", err, st.Mode().Perm())
			}
		}},
		{"a read-only file is refused", func(dir string) string {
			os.WriteFile(filepath.Join(dir, "ro.json"), []byte("old"), 0o444)
			return filepath.Join(dir, "ro.json")
		}, func(t *testing.T, dir string, err error) {
			if err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Errorf("error %v, want one saying read-only", err)
			}
			st, _ := os.Stat(filepath.Join(dir, "ro.json"))
			if got, _ := os.ReadFile(filepath.Join(dir, "ro.json")); string(got) != "old" || st.Mode().Perm() != 0o444 {
				t.Errorf("the file became %q, mode %v", got, st.Mode().Perm())
			}
			assertOnly(t, dir, "ro.json")
		}},
		{"a link to a read-only file is refused", func(dir string) string {
			os.WriteFile(filepath.Join(dir, "ro.json"), []byte("old"), 0o444)
			os.Symlink("ro.json", filepath.Join(dir, "link.json"))
			return filepath.Join(dir, "link.json")
		}, func(t *testing.T, dir string, err error) {
			if err == nil {
				t.Error("replaced a read-only file through a link")
			}
		}},
		{"a directory is refused", func(dir string) string {
			os.Mkdir(filepath.Join(dir, "d"), 0o755)
			return filepath.Join(dir, "d")
		}, func(t *testing.T, dir string, err error) {
			if err == nil {
				t.Error("replaced a directory")
			}
		}},
	}
	for wname, write := range writers {
		for _, tt := range tests {
			t.Run(wname+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				path := tt.setup(dir)
				tt.check(t, dir, write(path, []byte("new")))
			})
		}
	}
}
