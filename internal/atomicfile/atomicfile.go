// Package atomicfile writes files so that a reader never sees half of one
// and nothing a user had is lost: data goes to a temporary file in the
// target's directory, which then takes the target's name in one step.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Replace writes data to path, replacing what was there atomically: a
// reader sees the old contents or the new, never a mix. Use it for files
// the tool owns and regenerates (reports).
func Replace(path string, data []byte) error {
	tmp, err := temp(filepath.Dir(path), filepath.Base(path), data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op after the rename
	return os.Rename(tmp, path)
}

// CreateNew writes data to a new file in dir named base+ext, or base-2+ext,
// base-3+ext, ... if that name is taken, and returns its path. It never
// replaces a file: the final name is made by a hard link, which fails where
// a file exists, so the check and the write cannot race.
func CreateNew(dir, base, ext string, data []byte) (string, error) {
	tmp, err := temp(dir, base, data)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp) // the data lives on under the linked name
	for i := 1; ; i++ {
		name := base + ext
		if i > 1 {
			name = base + "-" + strconv.Itoa(i) + ext
		}
		path := filepath.Join(dir, name)
		err := os.Link(tmp, path)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
}

// temp writes data to a fresh hidden file in dir, readable by all as a
// report should be, and returns its name.
func temp(dir, base string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+base+"-*.tmp")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, 0o644)
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// CheckDir reports whether CreateNew can write into dir: it exists, is a
// directory, and a file can be made there (a temporary one, removed at
// once). Commands call it before long work whose result goes into dir, so
// that a bad directory fails at the start rather than after the work.
func CheckDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err // *PathError: "stat DIR: no such file or directory"
	}
	if !st.IsDir() {
		return &fs.PathError{Op: "write into", Path: dir, Err: errors.New("not a directory")}
	}
	f, err := os.CreateTemp(dir, ".tlcheck-probe-*.tmp")
	if err != nil {
		return err // *PathError: "open DIR/...: permission denied"
	}
	f.Close()
	return os.Remove(f.Name())
}
