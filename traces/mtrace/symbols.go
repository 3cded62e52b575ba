package mtrace

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/internal/addr2line"
	"github.com/tlcheck/tlcheck/traces"
)

// Symbols turns the callers of a log that lie in one binary into
// "file:line", as glibc's mtrace script does when given the binary
// ("mtrace PROG LOG") by running addr2line: here from the binary's own
// DWARF line table, read once.
//
// glibc writes a caller as "FILE:(SYM+OFF)[0xADDR]", "FILE:[0xADDR]", or
// "[0xADDR]" when it knows no object. Since glibc 2.34, ADDR is the
// caller's offset from where FILE is loaded; for a PIE, linked at 0, that
// is the link-time address addr2line takes, and for a binary linked at a
// fixed address (-no-pie) the link-time address is the offset plus where
// its first segment is linked. Older glibc wrote the caller's run-time
// address, which for a fixed-address binary is the link-time one. So, as
// glibc's script tries its relocated address and then the address as
// written, Symbols tries ADDR plus that base, then ADDR, and takes the
// first that lies in the binary's code and has a line.
//
// A caller names the binary when FILE is the path given, has its base
// name, or is empty. Callers in other objects (shared libraries), and
// those with no line known, are kept as written.
type Symbols struct {
	table *addr2line.Table
	path  string
	base  string
	sites map[string]string // a caller as written: what it becomes
	lines map[string]string // "file:line" strings, shared by callers
}

// maxCallers bounds Symbols' caches, as maxSites bounds the reader's.
const maxCallers = 1 << 14

// NewSymbols reads the line table of the ELF binary at path (built with
// -g). The error names the path and says what is missing.
func NewSymbols(path string) (*Symbols, error) {
	t, err := addr2line.Open(path)
	if err != nil {
		return nil, err
	}
	return &Symbols{table: t, path: path, base: filepath.Base(path),
		sites: make(map[string]string), lines: make(map[string]string)}, nil
}

// Resolve returns site as "file:line" if it is a caller in the binary
// whose line is known, and site itself otherwise.
func (s *Symbols) Resolve(site string) string {
	if r, ok := s.sites[site]; ok {
		return r
	}
	if len(s.sites) >= maxCallers {
		clear(s.sites)
		clear(s.lines)
	}
	r := site
	if file, addr, ok := splitCaller(site); ok && s.names(file) {
		for _, pc := range []uint64{addr + s.table.Base, addr} {
			if !s.table.InText(pc) {
				continue
			}
			if f, line, err := s.table.Line(pc); err == nil {
				r = f + ":" + strconv.Itoa(line)
				if shared, ok := s.lines[r]; ok {
					r = shared // one string per line: the model tells sites apart by their bytes' place
				} else {
					s.lines[r] = r
				}
				break
			}
		}
	}
	s.sites[site] = r
	return r
}

// names reports whether a caller's FILE is the binary.
func (s *Symbols) names(file string) bool {
	return file == "" || file == s.path || filepath.Base(file) == s.base
}

// splitCaller splits a caller as glibc writes it into its FILE (empty for
// "[0xADDR]") and ADDR.
func splitCaller(site string) (file string, addr uint64, ok bool) {
	i := strings.LastIndexByte(site, '[')
	if i < 0 || !strings.HasSuffix(site, "]") {
		return "", 0, false
	}
	addr, ok = parseAddr([]byte(site[i+1 : len(site)-1]))
	if !ok || addr == 0 {
		return "", 0, false
	}
	rest := site[:i]
	if strings.HasSuffix(rest, ")") { // "(SYM+OFF)"
		j := strings.LastIndexByte(rest, '(')
		if j < 0 {
			return "", 0, false
		}
		rest = rest[:j]
	}
	switch {
	case rest == "" && i == 0:
		return "", addr, true
	case strings.HasSuffix(rest, ":"):
		return rest[:len(rest)-1], addr, true
	}
	return "", 0, false
}

// Source returns src with each event's site resolved.
func (s *Symbols) Source(src traces.Source) traces.Source {
	return &symbolized{Source: src, syms: s}
}

type symbolized struct {
	traces.Source
	syms *Symbols
}

func (w *symbolized) Next(ev *traces.Event) error {
	err := w.Source.Next(ev)
	if err == nil && ev.Site != "" {
		ev.Site = w.syms.Resolve(ev.Site)
	}
	return err
}
