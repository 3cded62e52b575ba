package mtrace

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	"github.com/tlcheck/tlcheck/internal/addr2line"
)

func TestSplitCaller(t *testing.T) {
	tests := []struct {
		site string
		file string
		addr uint64
		ok   bool
	}{
		{"./prog:[0x11ce]", "./prog", 0x11ce, true},
		{"./prog:(main+0x1e)[0x11ce]", "./prog", 0x11ce, true},
		{"./prog:(helper-0x4)[0x11ce]", "./prog", 0x11ce, true},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6:(__libc_start_main+0x85)[0x271ca]", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x271ca, true},
		{"[0x401136]", "", 0x401136, true},
		{":[0x401136]", "", 0x401136, true}, // glibc of old wrote the main program's name empty
		{"a:b:[0x10]", "a:b", 0x10, true},
		{"./prog:[0x0]", "", 0, false},
		{"./prog:[11ce]", "", 0, false},
		{"./prog:[0x11ce", "", 0, false},
		{"./prog[0x11ce]", "", 0, false},
		{"./prog:main+0x1e)[0x11ce]", "", 0, false},
		{"(main+0x1e)[0x11ce]", "", 0, false},
		{"a.tl:3", "", 0, false},
		{"", "", 0, false},
	}
	for _, tt := range tests {
		file, addr, ok := splitCaller(tt.site)
		if file != tt.file || addr != tt.addr || ok != tt.ok {
			t.Errorf("splitCaller(%q) = %q, %#x, %v; want %q, %#x, %v", tt.site, file, addr, ok, tt.file, tt.addr, tt.ok)
		}
	}
}

// TestResolve builds a program as a PIE and at a fixed address and
// resolves callers in every form glibc writes against its line table.
func TestResolve(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc to build a test binary: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte("#include <stdlib.h>\nint main(void) {\n\tvoid *p = malloc(8);\n\tfree(p);\n\treturn 0;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		flags []string
		base  uint64
	}{
		{"pie", []string{"-fPIE", "-pie"}, 0},
		{"no-pie", []string{"-fno-pie", "-no-pie"}, 0x400000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(dir, "prog-"+tt.name)
			if out, err := exec.Command(gcc, append(append([]string{"-g", "-O0", "-o", bin}, tt.flags...), src)...).CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s", err, out)
			}
			pc := mainAddr(t, bin) + 8 // in main's body, past its prologue's first bytes
			tab, err := addr2line.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			f, line, err := tab.Line(pc)
			if err != nil {
				t.Fatalf("no line at main+8: %v", err)
			}
			want := f + ":" + strconv.Itoa(line)
			off := pc - tt.base // what glibc 2.34 and later write
			syms, err := NewSymbols(bin)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ site, want string }{
				{fmt.Sprintf("./prog-%s:[%#x]", tt.name, off), want},
				{fmt.Sprintf("%s:[%#x]", bin, off), want},
				{fmt.Sprintf("./prog-%s:(main+0x8)[%#x]", tt.name, off), want},
				{fmt.Sprintf("[%#x]", off), want},
				{fmt.Sprintf("./other:[%#x]", off), fmt.Sprintf("./other:[%#x]", off)},             // another object: kept
				{"/usr/lib/libc.so.6:[0x271ca]", "/usr/lib/libc.so.6:[0x271ca]"},                   // kept
				{fmt.Sprintf("./prog-%s:[0x1]", tt.name), fmt.Sprintf("./prog-%s:[0x1]", tt.name)}, // no code there: kept
				{"a.tl:3", "a.tl:3"},
			} {
				if got := syms.Resolve(c.site); got != c.want {
					t.Errorf("Resolve(%q) = %q, want %q", c.site, got, c.want)
				}
			}
			if tt.base != 0 {
				// glibc before 2.34 wrote the run-time address, which for a
				// fixed-address binary is the link-time one.
				if got := syms.Resolve(fmt.Sprintf("./prog-%s:[%#x]", tt.name, pc)); got != want {
					t.Errorf("absolute caller resolved to %q, want %q", got, want)
				}
			}
			a, b := syms.Resolve(fmt.Sprintf("[%#x]", off)), syms.Resolve(fmt.Sprintf("./prog-%s:[%#x]", tt.name, off))
			// One string for one line: the model tells sites apart
			// quickest by where their bytes lie.
			if a != want || unsafe.StringData(a) != unsafe.StringData(b) {
				t.Errorf("two callers of one line resolved to %q and %q, not one shared string", a, b)
			}
		})
	}
}

// mainAddr returns main's link-time address in bin.
func mainAddr(t *testing.T, bin string) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == "main" {
			return s.Value
		}
	}
	t.Fatal("no main in the symbol table")
	return 0
}
