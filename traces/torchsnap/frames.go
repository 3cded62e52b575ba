package torchsnap

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Frames and sites. A frame comes down to its file (an index of
// shaper.files), its line and whether memory_viz shows it, packed in the
// value the memo keeps for it (frameOf); a frames list to its site, made
// once for each file and line.

func (sh *shaper) finishFrame(o *obj, pl place) (val, error) {
	if _, err := strField(o, 0, "filename", pl); err != nil {
		return val{}, err
	}
	file := o.field(0)
	shown := file.i > 0 && file.str() != "??" && !hides(file, true)
	if shown && o.has(2) {
		if _, err := strField(o, 2, "name", pl); err != nil {
			return val{}, err
		}
		shown = !hides(o.field(2), false)
	}
	line := int64(0)
	if o.has(1) {
		var err error
		if line, err = intField(o, 1, "line", pl); err != nil {
			return val{}, err
		}
	}
	fid := sh.fileID(file)
	id := sh.frameOf(fid, line, shown)
	if sh.keepStacks && shown && o.has(2) && sh.files[fid].py {
		sh.nameFrame(id, o.field(2).str())
	}
	return val{k: kFrame, i: id}, nil
}

// frameOf returns a frame's identity, as kFrame's i: its file, whether it
// is shown and its line, packed (file << 33 | shown << 32 | line) where
// the line fits 32 bits, and else, negative, an index of frames, where
// such frames are interned.
func (sh *shaper) frameOf(file int32, line int64, shown bool) int64 {
	if line >= 0 && line < 1<<32 {
		id := int64(file)<<33 | line
		if shown {
			id |= 1 << 32
		}
		return id
	}
	key := frameKey{file, line, shown}
	id, ok := sh.frameN[key]
	if !ok {
		sh.frames = append(sh.frames, frameRec{file: file, line: line, shown: shown})
		id = int32(len(sh.frames) - 1)
		sh.frameN[key] = id
	}
	return -1 - int64(id)
}

// frame unpacks frameOf's identity.
func (sh *shaper) frame(id int64) (file int32, line int64, shown bool) {
	if id < 0 {
		f := &sh.frames[-1-id]
		return f.file, f.line, f.shown
	}
	return int32(id >> 33), id & (1<<32 - 1), id&(1<<32) != 0
}

// fileID returns the index in files of a filename, kept in the string's
// tail once known.
func (sh *shaper) fileID(v val) int32 {
	t := v.tail()
	if id := binary.LittleEndian.Uint32(t[4:]); id != 0 {
		return int32(id - 1)
	}
	s := v.str()
	id, ok := sh.fileN[s]
	if !ok {
		sh.files = append(sh.files, fileRec{name: s, py: strings.HasSuffix(s, ".py")})
		id = int32(len(sh.files) - 1)
		sh.fileN[s] = id
	}
	binary.LittleEndian.PutUint32(t[4:], uint32(id)+1)
	return id
}

// siteOf returns frame id's site, "file:line" ("file" where line is 0),
// made once for each file and line.
func (sh *shaper) siteOf(id int64, pl place) (int32, error) {
	file, line, _ := sh.frame(id)
	key := frameKey{file: file, line: line}
	site, ok := sh.siteN[key]
	if !ok {
		s := sh.files[file].name
		if line > 0 {
			s += ":" + strconv.FormatInt(line, 10)
		}
		sh.siteBytes += int64(len(s))
		if sh.siteBytes > sh.maxSites {
			return 0, &Error{Where: pl.String(), Err: fmt.Errorf("the snapshot's distinct sites (file:line) take more than %d bytes, the most tlcheck holds (Limits.MaxSites)", sh.maxSites)}
		}
		sh.sites = append(sh.sites, s)
		site = int32(len(sh.sites) - 1)
		sh.siteN[key] = site
	}
	return site, nil
}

// omitFunctions and omitFilenames are the frames memory_viz hides (the
// stack unwinder, the interpreter loop, the dispatcher), so that the site
// is the frame a user reads first.
var (
	omitFunctions = []string{"unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start", "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_"}
	omitFilenames = []string{"core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c", "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c", "cpython/abstract.h"}
)

// hides reports whether memory_viz hides frames of this function name
// (or file name, with file), kept in the string's tail once known.
func hides(v val, file bool) bool {
	t := v.tail()
	known, hidden := byte(1), byte(2)
	if file {
		known, hidden = 4, 8
	}
	if t[0]&known != 0 {
		return t[0]&hidden != 0
	}
	omit := omitFunctions
	if file {
		omit = omitFilenames
	}
	s := v.str()
	t[0] |= known
	for _, o := range omit {
		if strings.Contains(s, o) {
			t[0] |= hidden
			return true
		}
	}
	return false
}
