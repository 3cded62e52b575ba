package addr2line

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// progC is a small program with calls on several lines, a static helper
// and a loop, so that its line table has many rows.
const progC = `#include <stdlib.h>
#include <string.h>
static void *helper(size_t n) {
	void *p = malloc(n);
	memset(p, 0, n);
	return p;
}
int main(int argc, char **argv) {
	void *a = malloc(32);
	void *b = helper(64);
	for (int i = 0; i < argc; i++)
		b = realloc(b, 64 + i);
	free(a);
	free(b);
	return 0;
}
`

// build compiles progC with gcc and flags, skipping the test without gcc.
func build(t *testing.T, flags ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc to build a test binary: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(src, []byte(progC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, append(append([]string{"-o", bin}, flags...), src)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", flags, err, out)
	}
	return bin
}

// TestLineAgreesWithAddr2line holds Line to binutils' addr2line at every
// byte of the binary's code, for binaries built as a PIE, at a fixed
// address, and optimized.
func TestLineAgreesWithAddr2line(t *testing.T) {
	if _, err := exec.LookPath("addr2line"); err != nil {
		t.Skipf("no addr2line to compare with: %v", err)
	}
	for _, tt := range []struct {
		name  string
		flags []string
		base  uint64
	}{
		{"pie", []string{"-g", "-O0", "-fPIE", "-pie"}, 0},
		{"no-pie", []string{"-g", "-O0", "-fno-pie", "-no-pie"}, 0x400000},
		{"optimized", []string{"-g", "-O2", "-fPIE", "-pie"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := build(t, tt.flags...)
			tab, err := Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "no-pie" && tab.Base != tt.base || tt.name == "pie" && tab.Base != 0 {
				t.Errorf("Base %#x, want %#x", tab.Base, tt.base)
			}
			var pcs []uint64
			for _, r := range tab.text {
				for pc := r[0]; pc < r[1]; pc++ {
					pcs = append(pcs, pc)
				}
			}
			want := addr2line(t, bin, pcs)
			found := 0
			for i, pc := range pcs {
				file, line, err := tab.Line(pc)
				got := "??:0"
				if err == nil {
					got = file + ":" + strconv.Itoa(line)
					found++
				}
				if got != want[i] {
					t.Errorf("Line(%#x) = %s, addr2line says %s", pc, got, want[i])
				}
			}
			if found < 20 {
				t.Errorf("only %d addresses of %d have a line: the table is not being read", found, len(pcs))
			}
		})
	}
}

// addr2line runs binutils' addr2line on pcs, one output line each, without
// discriminators (which Line does not give).
func addr2line(t *testing.T, bin string, pcs []uint64) []string {
	t.Helper()
	args := []string{"-e", bin}
	for _, pc := range pcs {
		args = append(args, fmt.Sprintf("%#x", pc))
	}
	out, err := exec.Command("addr2line", args...).Output()
	if err != nil {
		t.Fatalf("addr2line: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(pcs) {
		t.Fatalf("addr2line gave %d lines for %d addresses", len(lines), len(pcs))
	}
	for i, l := range lines {
		l, _, _ = strings.Cut(l, " (discriminator")
		// "crtstuff.c:?": addr2line names the unit of code that has no
		// line rows (the C runtime's); Line knows no line there either.
		if strings.HasPrefix(l, "??:") || strings.HasSuffix(l, ":?") {
			l = "??:0"
		}
		lines[i] = l
	}
	return lines
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(notELF, []byte(progC), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path func(t *testing.T) string
		want string
	}{
		{"missing", func(*testing.T) string { return filepath.Join(dir, "nope") }, "no such file"},
		{"not ELF", func(*testing.T) string { return notELF }, "not an ELF binary"},
		{"no -g", func(t *testing.T) string { return build(t, "-O0") }, "no DWARF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			_, err := Open(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Open(%s) = %v, want an error naming the path and saying %q", path, err, tt.want)
			}
		})
	}
}
