package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// The mtrace input must agree with glibc's own mtrace script: on the same
// log, the same blocks not freed. These tests make logs of real programs at
// test time and hold tlcheck's leak list against the script's.

// shimC is the preloaded object that switches tracing on. glibc keeps
// logging until the process exits, so the destructor deliberately does
// not call muntrace: frees made by exit handlers stay in the log.
const shimC = `#include <mcheck.h>
__attribute__((constructor)) static void tlcheck_on(void) { mtrace(); }
__attribute__((destructor)) static void tlcheck_off(void) { }
`

// mtraceTools returns the preload list that makes a process log its heap
// calls, building the shim in dir. It skips the test where glibc's tracing
// cannot work: not Linux, or no gcc, libc_malloc_debug or mtrace script.
func mtraceTools(t *testing.T, dir string) (preload string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("mtrace logs need glibc on Linux; this is %s", runtime.GOOS)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc to build the mtrace shim: %v", err)
	}
	out, err := exec.Command(gcc, "-print-file-name=libc_malloc_debug.so.0").Output()
	if lib := strings.TrimSpace(string(out)); err != nil || !filepath.IsAbs(lib) {
		t.Skipf("glibc's libc_malloc_debug.so.0 is not installed (gcc -print-file-name: %q, %v)", lib, err)
	}
	if _, err := exec.LookPath("mtrace"); err != nil {
		t.Skipf("glibc's mtrace script is not installed: %v", err)
	}
	src := filepath.Join(dir, "shim.c")
	shim := filepath.Join(dir, "shim.so")
	if err := os.WriteFile(src, []byte(shimC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", shim, src).CombinedOutput(); err != nil {
		t.Fatalf("building the mtrace shim: %v\n%s", err, out)
	}
	return "libc_malloc_debug.so.0 " + shim
}

// mtraceLog runs argv with glibc's tracing on (env adds to the
// environment) and returns the log it wrote.
func mtraceLog(t *testing.T, preload, dir, name string, env []string, argv ...string) string {
	t.Helper()
	if _, err := exec.LookPath(argv[0]); err != nil {
		t.Skipf("%s is not installed: %v", argv[0], err)
	}
	if argv[0] == "python3" {
		// python3 may be a wrapper script (pyenv) whose every process
		// would log, truncating one another's log: run the interpreter.
		out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
		if err != nil {
			t.Fatalf("finding python3's interpreter: %v", err)
		}
		argv = append([]string{strings.TrimSpace(string(out))}, argv[1:]...)
	}
	log := filepath.Join(dir, name+".mtrace")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+preload, "MALLOC_TRACE="+log)
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", argv[0], err, out)
	}
	data, err := os.ReadFile(log)
	if err != nil || !bytes.HasPrefix(data, []byte("= Start\n")) {
		t.Fatalf("%s wrote no mtrace log (%v): %.200q", argv[0], err, data)
	}
	t.Logf("%s: %d lines of mtrace log", name, bytes.Count(data, []byte("\n")))
	return log
}

// block is one entry of a leak list: where, how big, and the caller as
// glibc's script prints it without a binary (the address in brackets).
type block struct {
	Addr   traces.Addr
	Size   uint64
	Caller string
}

// glibcLeaks runs glibc's mtrace script on log and parses its table of
// memory not freed.
func glibcLeaks(t *testing.T, log string) []block {
	t.Helper()
	out, err := exec.Command("mtrace", log).Output()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("mtrace %s: %v", log, err)
	}
	row := regexp.MustCompile(`^(0x[0-9a-f]+) +(0x[0-9a-f]+|0)  at (.*)$`)
	var leaks []block
	table := false
	for line := range strings.SplitSeq(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "Memory not freed:"):
			table = true
		case table:
			if m := row.FindStringSubmatch(line); m != nil {
				addr, _ := strconv.ParseUint(m[1], 0, 64)
				size, _ := strconv.ParseUint(m[2], 0, 64)
				leaks = append(leaks, block{traces.Addr(addr), size, m[3]})
			}
		}
	}
	if !table && !strings.Contains(string(out), "No memory leaks.") {
		t.Fatalf("cannot read mtrace's output:\n%s", out)
	}
	return leaks
}

// tlcheckLeaks replays log with --from mtrace --json and returns the leaks
// it reports, each sized by the log line its "allocated" history names, and
// the report's leaked totals.
func tlcheckLeaks(t *testing.T, log string) ([]block, traces.Report) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(&env{stdout: &stdout, stderr: &stderr}, []string{"replay", "--from", "mtrace", "--json", log})
	if code != exitClean && code != exitViolation {
		t.Fatalf("replay exited %d: %s", code, stderr.String())
	}
	var rep traces.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("replay --json: %v\n%.500s", err, stdout.String())
	}
	lines := logLines(t, log)
	var leaks []block
	for _, v := range rep.Violations {
		if v.Kind != traces.Leak {
			continue
		}
		made := slices.IndexFunc(v.Related, func(r traces.Related) bool { return r.What == "allocated" })
		if made < 0 || v.Related[made].Line < 1 || v.Related[made].Line > len(lines) {
			t.Fatalf("leak at %s names no allocating line of the log: %+v", v.Addr, v.Related)
		}
		b := parseMalloc(t, lines[v.Related[made].Line-1])
		if b.Addr != v.Addr {
			t.Errorf("leak at %s names line %d, which allocates %s", v.Addr, v.Related[made].Line, b.Addr)
		}
		leaks = append(leaks, b)
	}
	return leaks, rep
}

func logLines(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// parseMalloc reads the block an allocating log line made, with the caller
// reduced as glibc's script reduces it when given no binary.
func parseMalloc(t *testing.T, line string) block {
	t.Helper()
	f := strings.Fields(line)
	caller := ""
	if len(f) > 0 && f[0] == "@" {
		caller, f = scriptCaller(f[1]), f[2:]
	}
	if len(f) != 3 || (f[0] != "+" && f[0] != ">") {
		t.Fatalf("not an allocating line: %q", line)
	}
	addr, err1 := strconv.ParseUint(f[1], 0, 64)
	size, err2 := strconv.ParseUint(f[2], 16, 64)
	if strings.HasPrefix(f[2], "0x") {
		size, err2 = strconv.ParseUint(f[2][2:], 16, 64)
	}
	if err1 != nil || err2 != nil {
		t.Fatalf("bad allocating line %q: %v %v", line, err1, err2)
	}
	return block{traces.Addr(addr), size, caller}
}

// scriptCaller is the caller as glibc's script prints it without a binary:
// "file:(fn+off)[0xADDR]" and "[0xADDR]" become "0xADDR".
func scriptCaller(s string) string {
	if i := strings.LastIndexByte(s, '['); i >= 0 && strings.HasSuffix(s, "]") && !strings.Contains(s, "]:") {
		return s[i+1 : len(s)-1]
	}
	return s
}

func sortBlocks(bs []block) []block {
	slices.SortFunc(bs, func(a, b block) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	return bs
}

// cmpBlocks compares two leak lists as multisets and describes the
// difference, or returns "".
func cmpBlocks(want, got []block) string {
	want, got = sortBlocks(slices.Clone(want)), sortBlocks(slices.Clone(got))
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || i < len(want) && fmt.Sprint(want[i]) < fmt.Sprint(got[j]):
			fmt.Fprintf(&b, "-%s %#x %s\n", want[i].Addr, want[i].Size, want[i].Caller)
			i++
		case i == len(want) || fmt.Sprint(got[j]) < fmt.Sprint(want[i]):
			fmt.Fprintf(&b, "+%s %#x %s\n", got[j].Addr, got[j].Size, got[j].Caller)
			j++
		default:
			i++
			j++
		}
	}
	return b.String()
}
