package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Writer writes a file whose size is not known in advance (an export of a
// trace of any length) without holding it in memory: the data streams to
// a temporary file in the target's directory, which takes the target's
// name only at Commit. Until then a reader sees the old file, or none.
type Writer struct {
	f    *os.File
	path string      // the file replaced: the target of a symbolic link
	mode fs.FileMode // its permissions once committed; direct: f is path
}

// NewWriter starts replacing path, as Replace does (through a symbolic
// link, keeping permissions, refusing a read-only file). Call Commit to
// finish, or Abort to leave path as it was; Abort after Commit does
// nothing, so that a deferred Abort is always safe.
func NewWriter(path string) (*Writer, error) {
	target, mode, err := resolve(path)
	if err != nil {
		return nil, err
	}
	if mode == direct { // a device or a pipe: written as it goes
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &Writer{f: f, path: target, mode: mode}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+"-*.tmp")
	if err != nil {
		return nil, named(err, path)
	}
	return &Writer{f: f, path: target, mode: mode}, nil
}

// Write writes to the temporary file.
func (w *Writer) Write(p []byte) (int, error) { return w.f.Write(p) }

// Commit closes the temporary file and gives it the target's name, with
// the old file's permissions (readable by all for a new one). On an error the target is left
// as it was and the temporary file is removed.
func (w *Writer) Commit() error {
	if w.f == nil {
		return os.ErrClosed
	}
	f := w.f
	w.f = nil
	err := f.Close()
	if w.mode == direct {
		return err
	}
	if err == nil {
		err = os.Chmod(f.Name(), w.mode)
	}
	if err == nil {
		err = os.Rename(f.Name(), w.path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Abort removes the temporary file and leaves the target as it was.
func (w *Writer) Abort() {
	if w.f == nil {
		return
	}
	w.f.Close()
	if w.mode != direct { // what a device was given cannot be taken back
		os.Remove(w.f.Name())
	}
	w.f = nil
}
