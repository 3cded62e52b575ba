// Package addr2line maps code addresses of an ELF binary to source lines,
// as binutils' addr2line does, from the DWARF line tables the binary
// carries when built with -g. It reads the tables once, into a sorted
// list, so that each lookup is a binary search.
package addr2line

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Table is a binary's line table.
type Table struct {
	rows []row
	// Base is where the binary's first loadable segment starts, page
	// aligned: glibc's mtrace writes a caller as its offset from there
	// (dladdr's dli_fbase), so that for a PIE (linked at 0) the offset is
	// the link-time address, and for a fixed-address binary the offset
	// plus Base is.
	Base uint64
	// text holds the binary's executable address ranges, link-time.
	text [][2]uint64
}

// row is one address range of the table: [addr, next row's addr) is line
// of file, unless end marks the end of a sequence (no line there).
type row struct {
	addr uint64
	file string
	line int
	end  bool
}

// Open reads the line table of the ELF binary at path. It fails for a file
// that is not ELF, or has no DWARF line table (built without -g, or
// stripped).
func Open(path string) (*Table, error) {
	f, err := elf.Open(path)
	if _, ok := err.(*elf.FormatError); ok {
		return nil, fmt.Errorf("%s: not an ELF binary (%v)", path, err)
	}
	if err != nil {
		return nil, err // *PathError: names the path
	}
	defer f.Close()
	t := &Table{}
	first := true
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if first {
			t.Base, first = p.Vaddr&^(pageSize-1), false
		}
		if p.Flags&elf.PF_X != 0 {
			t.text = append(t.text, [2]uint64{p.Vaddr, p.Vaddr + p.Memsz})
		}
	}
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("%s: no DWARF debugging information (build it with -g, and do not strip it): %w", path, err)
	}
	if err := t.read(d); err != nil {
		return nil, fmt.Errorf("%s: reading the DWARF line table: %w", path, err)
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("%s: the DWARF information has no line table (build it with -g)", path)
	}
	return t, nil
}

// pageSize is the alignment glibc's loader maps the first segment at; a
// first segment is aligned to it on every platform tlcheck runs on.
const pageSize = 4096

// read collects the rows of every compilation unit's line program.
func (t *Table) read(d *dwarf.Data) error {
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil {
			return err
		}
		r.SkipChildren()
		if lr == nil {
			continue // a unit without line information
		}
		var le dwarf.LineEntry
		for {
			if err := lr.Next(&le); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			file := ""
			if le.File != nil {
				file = le.File.Name // joined with its directory by debug/dwarf
			}
			t.rows = append(t.rows, row{addr: le.Address, file: file, line: le.Line, end: le.EndSequence})
		}
	}
	// At one address the last row is the one that holds: so an end of
	// sequence sorts before the first row of the sequence that follows it
	// (units come in any order), and rows that moved no address keep their
	// order (stable), the last winning as in addr2line.
	sort.SliceStable(t.rows, func(i, j int) bool {
		a, b := t.rows[i], t.rows[j]
		return a.addr < b.addr || a.addr == b.addr && a.end && !b.end
	})
	return nil
}

// ErrNoLine says that an address lies in no line table range.
var ErrNoLine = errors.New("no source line at that address")

// Line returns the source file and line of the code at link-time address
// pc, or ErrNoLine.
func (t *Table) Line(pc uint64) (file string, line int, err error) {
	// The last row at or below pc.
	i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr > pc }) - 1
	if i < 0 || t.rows[i].end || t.rows[i].line == 0 {
		return "", 0, ErrNoLine
	}
	return t.rows[i].file, t.rows[i].line, nil
}

// InText reports whether pc lies in an executable segment of the binary.
func (t *Table) InText(pc uint64) bool {
	for _, r := range t.text {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}
