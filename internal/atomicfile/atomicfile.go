// Package atomicfile writes files so that a reader never sees half of one
// and nothing a user had is lost: data goes to a temporary file in the
// target's directory, which then takes the target's name in one step.
//
// Replacing a file keeps what the user made of it: a symbolic link is
// written through (its target is replaced, the link stays), the file's
// permissions are kept, and a file the user cannot write, or has made
// read-only, is refused rather than replaced. A device or a named pipe
// (/dev/null, /dev/stdout, a FIFO) has no contents to keep and no
// directory entry to swap: it is written directly.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Replace writes data to path, replacing what was there atomically: a
// reader sees the old contents or the new, never a mix. Use it for files
// the tool owns and regenerates (reports, baselines). Where path is a
// symbolic link, its target is replaced; an existing file keeps its
// permissions; a file that is read-only or that the user may not write is
// an error (*fs.PathError), and stays as it was.
func Replace(path string, data []byte) error {
	target, mode, err := resolve(path)
	if err != nil {
		return err
	}
	if mode == direct {
		return writeDirect(target, data)
	}
	tmp, err := temp(filepath.Dir(target), filepath.Base(target), data, mode)
	if err != nil {
		return named(err, path)
	}
	defer os.Remove(tmp) // a no-op after the rename
	return os.Rename(tmp, target)
}

// CheckReplace reports whether Replace could replace path (see resolve),
// without writing anything: a command calls it before long work whose
// result goes there, so that a read-only file fails at the start.
func CheckReplace(path string) error {
	target, _, err := resolve(path)
	if err != nil {
		return err
	}
	_, err = os.Stat(filepath.Dir(target))
	return err // *PathError: "stat DIR: no such file or directory"
}

// direct is resolve's mode for a file written in place: a device or a
// named pipe.
const direct = fs.ModeDevice

// resolve returns the file that replacing path replaces (path, or the
// file a symbolic link at path leads to) and the permissions the new file
// gets: the old file's, or 0644 for a new one; direct for a device or a
// named pipe, which is written in place. It refuses a file that is
// read-only or that the user may not write, and a directory or a socket.
func resolve(path string) (string, fs.FileMode, error) {
	target := path
	for range 40 { // as the kernel, give up on a loop of links
		st, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return target, 0o644, nil // a new file, or a link to one not made yet
		}
		if err != nil {
			return "", 0, err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			if st.Mode()&(fs.ModeDevice|fs.ModeNamedPipe) != 0 {
				return target, direct, nil
			}
			if !st.Mode().IsRegular() {
				return "", 0, &fs.PathError{Op: "replace", Path: path, Err: errors.New("not a regular file")}
			}
			if st.Mode().Perm()&0o222 == 0 {
				return "", 0, &fs.PathError{Op: "replace", Path: path, Err: errors.New("the file is read-only")}
			}
			f, err := os.OpenFile(target, os.O_WRONLY, 0) // no truncation: only asks whether the user may write it
			if err != nil {
				return "", 0, err
			}
			f.Close()
			return target, st.Mode().Perm(), nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", 0, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(target), link)
		}
		target = link
	}
	return "", 0, &fs.PathError{Op: "replace", Path: path, Err: errors.New("too many levels of symbolic links")}
}

// CreateNew writes data to a new file in dir named base+ext, or base-2+ext,
// base-3+ext, ... if that name is taken, and returns its path. It never
// replaces a file: the final name is made by a hard link, which fails where
// a file exists, so the check and the write cannot race.
func CreateNew(dir, base, ext string, data []byte) (string, error) {
	tmp, err := temp(dir, base, data, 0o644)
	if err != nil {
		return "", named(err, filepath.Join(dir, base+ext))
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

// temp writes data to a fresh hidden file in dir with permissions mode
// (0644, readable by all, as a report should be, for a new file), and
// returns its name.
func temp(dir, base string, data []byte, mode fs.FileMode) (string, error) {
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
		err = os.Chmod(name, mode)
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// named makes an error met writing the hidden temporary file name the
// file the user asked for: "create nodir/x.html: in directory nodir: no
// such file or directory", not the temporary file's name, which the user
// never gave and never sees.
func named(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.HasSuffix(pe.Path, ".tmp") {
		return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("in directory %s: %w", filepath.Dir(path), pe.Err)}
	}
	return err
}

// writeDirect writes data to a device or named pipe in place.
func writeDirect(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
