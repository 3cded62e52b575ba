package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// TestDevicesAreWrittenDirectly: /dev/null and a named pipe have no
// contents to keep and no directory entry to swap, so they are written in
// place, by Replace and by a Writer, never refused.
func TestDevicesAreWrittenDirectly(t *testing.T) {
	if err := atomicfile.CheckReplace(os.DevNull); err != nil {
		t.Errorf("CheckReplace(%s): %v", os.DevNull, err)
	}
	if err := atomicfile.Replace(os.DevNull, []byte("x")); err != nil {
		t.Errorf("Replace(%s): %v", os.DevNull, err)
	}
	w, err := atomicfile.NewWriter(os.DevNull)
	if err != nil {
		t.Fatalf("NewWriter(%s): %v", os.DevNull, err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Error(err)
	}
	if err := w.Commit(); err != nil {
		t.Errorf("Commit: %v", err)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Errorf("%s is no longer a device: %v %v", os.DevNull, st, err)
	}

	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := atomicfile.Replace(fifo, []byte("through the pipe")); err != nil {
		t.Fatalf("Replace(fifo): %v", err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("the pipe carried %q", s)
	}
	// A directory is still refused.
	if err := atomicfile.Replace(t.TempDir(), nil); err == nil {
		t.Error("Replace of a directory succeeded")
	}
}

// TestErrorsNameTheTarget: a file that cannot be made is named as the
// user gave it, not as the hidden temporary file written first.
func TestErrorsNameTheTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodir", "x.html")
	_, werr := atomicfile.NewWriter(path)
	_, cerr := atomicfile.CreateNew(filepath.Dir(path), "x", ".html", nil)
	for name, err := range map[string]error{
		"Replace":   atomicfile.Replace(path, nil),
		"NewWriter": werr,
		"CreateNew": cerr,
	} {
		if err == nil || !strings.Contains(err.Error(), "create "+path+": in directory ") || strings.Contains(err.Error(), ".tmp") {
			t.Errorf("%s: %v; want it to name %s, not a temporary file", name, err, path)
		}
	}
}
