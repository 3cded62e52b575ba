package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/longtest"
)

// quickBound is what the README promises of its test command: at most 3
// minutes on two warm cores (issue 28).
const quickBound = 3 * time.Minute

// testCost is what one go test command cost: its wall time and the CPU
// time of it and everything it started (compiler, linker, test binaries,
// the drivers they start), from the rusage of the wait for it, which
// counts the waited-for descendants too.
type testCost struct {
	Pkg  string
	Wall time.Duration
	CPU  time.Duration
}

// goTestCost runs go test -count=1 with args and env added to the
// environment, and returns what it cost. A failing test fails the report:
// a suite that does not pass has no cost worth stating.
func goTestCost(env []string, args ...string) (testCost, error) {
	cmd := exec.Command("go", append([]string{"test", "-count=1"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	c := testCost{Pkg: strings.Join(args, " "), Wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		c.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if err != nil {
		return c, fmt.Errorf("go test %s: %w\n%s", c.Pkg, err, lastLines(out.String(), 30))
	}
	return c, nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// writeTestTime measures the README's test command and CI's long step and
// writes reports/testtime.md: the whole quick suite's wall and CPU time
// with the build cache warm (what a contributor waits for), then each
// package alone, one after another (what each costs, linking included),
// then the long step's packages (those that read TLCHECK_LONG) with it
// set.
func writeTestTime(out string) error {
	pkgs, err := goList("./...")
	if err != nil {
		return err
	}
	step("warming the build cache: go test -run ^$ ./...")
	if _, err := goTestCost(nil, "-run", "^$", "./..."); err != nil {
		return err
	}
	load := loadAverage()
	step("the quick suite: go test -count=1 ./...")
	whole, err := goTestCost(nil, "./...")
	if err != nil {
		return err
	}
	var each []testCost
	for _, p := range pkgs {
		step("go test -count=1 %s", p)
		c, err := goTestCost(nil, p)
		if err != nil {
			return err
		}
		c.Pkg = strings.TrimPrefix(p, module+"/")
		each = append(each, c)
	}
	longPkgs, err := longPackages()
	if err != nil {
		return err
	}
	var long []testCost
	for _, p := range longPkgs {
		step("%s=1 go test -count=1 %s", longtest.Env, p)
		c, err := goTestCost([]string{longtest.Env + "=1"}, p)
		if err != nil {
			return err
		}
		c.Pkg = strings.TrimPrefix(p, module+"/")
		long = append(long, c)
	}
	report := renderTestTime(describeMachine(), load, whole, each, long)
	return atomicfile.Replace(out, report)
}

// module is the module path, trimmed from package names in the report.
const module = "github.com/tlcheck/tlcheck"

// goList returns the import paths of the packages a pattern names.
func goList(pattern string) ([]string, error) {
	out, err := exec.Command("go", "list", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", pattern, err)
	}
	return strings.Fields(string(out)), nil
}

// longPackages returns the packages whose tests read TLCHECK_LONG: those
// that import internal/longtest (in their tests), which the long step
// runs again in full.
func longPackages() ([]string, error) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}`, module+"/...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && slices.Contains(f[1:], module+"/internal/longtest") {
			pkgs = append(pkgs, f[0])
		}
	}
	return pkgs, nil
}

func renderTestTime(m machine, load string, whole testCost, each, long []testCost) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# What the test suite costs: the quick suite and the long step")
	p("")
	p("Written by `go run ./reports/gen -only testtime` on %s; regenerate it, never edit it.",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	p("")
	verdict := "met"
	if whole.Wall > quickBound {
		verdict = fmt.Sprintf("**not met** under this load (%.1fx the bound); the CPU time over the cores is %s", whole.Wall.Seconds()/quickBound.Seconds(), seconds(whole.CPU/time.Duration(max(1, atoiOr(m.Cores)))))
	}
	p("| figure | measured | target | |")
	p("|---|---|---|---|")
	p("| `go test ./...` (the README's test command), build cache warm, wall time | **%s** | at most %s on 2 cores | %s |", seconds(whole.Wall), seconds(quickBound), verdict)
	p("| the same, CPU time of go and everything it started | %s | | |", seconds(whole.CPU))
	p("")
	p("Machine: %s, %s cores, %s, %s. Load average before the quick suite: %s; other", m.CPU, m.Cores, m.Memory, m.Go, load)
	p("work on the machine lengthens wall times, CPU times much less. CPU time is the rusage of the")
	p("wait for `go test`, which counts every process under it (compiler, linker, test binaries and")
	p("the drivers, Python and Node.js they start).")
	p("")
	p("## Each package alone")
	p("")
	p("`go test -count=1 PKG`, one package after another, so that each one's CPU time is its own")
	p("(linking its test binary included). The ten costliest:")
	p("")
	p("| package | wall | CPU |")
	p("|---|---:|---:|")
	slices.SortFunc(each, func(a, b testCost) int { return cmp.Compare(b.CPU, a.CPU) })
	var restCPU time.Duration
	var total time.Duration
	for i, c := range each {
		total += c.CPU
		if i < 10 {
			p("| %s | %s | %s |", c.Pkg, seconds(c.Wall), seconds(c.CPU))
		} else {
			restCPU += c.CPU
		}
	}
	if len(each) > 10 {
		p("| the other %d packages | | %s |", len(each)-10, seconds(restCPU))
	}
	p("| all %d packages | | %s |", len(each), seconds(total))
	p("")
	p("## The long step")
	p("")
	p("CI's second test step, `%s=1 go test ./...`, runs again in full only the packages whose", longtest.Env)
	p("tests read it (they import `internal/longtest`); the others come from the test cache. Their")
	p("long runs, one after another:")
	p("")
	p("| package | wall | CPU |")
	p("|---|---:|---:|")
	for _, c := range long {
		p("| %s | %s | %s |", c.Pkg, seconds(c.Wall), seconds(c.CPU))
	}
	return b.Bytes()
}

// atoiOr returns s as a number, or 0.
func atoiOr(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return n
		}
		n = n*10 + int(r-'0')
	}
	return n
}
