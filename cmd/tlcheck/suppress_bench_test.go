//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSuppressions replays a trace that leaks 20,000 blocks, each
// from a site of its own, with no suppression file and with one of
// 1,000,000 rules (exact sites, prefixes, suffixes and infixes, none of
// which suppresses the first half of the leaks), and reports the second
// run's wall time over the first's as rules/none, and the same for the
// process's CPU time (user and system, from getrusage) as
// rules/none-cpu, which a busy machine moves less. Scanning every rule
// for every finding made this 279 s against 0.13 s (about 2,000x);
// indexed, what is left is reading the rules and building the index.
// TLCHECK_SUPP_RULES sets how many.
func BenchmarkSuppressions(b *testing.B) {
	const leaks = 20_000
	nrules := 1_000_000
	if s := os.Getenv("TLCHECK_SUPP_RULES"); s != "" {
		fmt.Sscan(s, &nrules)
	}
	dir := b.TempDir()
	var tr bytes.Buffer
	tr.WriteString(`{"format":"tlcheck-trace","version":1}` + "\n")
	for i := range leaks {
		fmt.Fprintf(&tr, `{"op":"malloc","addr":"0x%x","size":16,"site":"src/m%d.c:7"}`+"\n", 0x1000+16*i, i)
	}
	tr.WriteString(`{"op":"end"}` + "\n")
	var rs strings.Builder
	for i := range nrules {
		k := i + leaks/2 // the first half of the leaks' sites match no rule
		switch i % 4 {
		case 0:
			fmt.Fprintf(&rs, "leak:src/m%d.c:7\n", k)
		case 1:
			fmt.Fprintf(&rs, "leak:src/m%d.c:*\n", k)
		case 2:
			fmt.Fprintf(&rs, "*:*/m%d.c:7\n", k)
		case 3:
			fmt.Fprintf(&rs, "leak:*/m%d.*\n", k)
		}
	}
	trace, supp := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "s.txt")
	if os.WriteFile(trace, tr.Bytes(), 0o644) != nil || os.WriteFile(supp, []byte(rs.String()), 0o644) != nil {
		b.Fatal("writing the inputs")
	}
	runReplay := func(args ...string) (wall, cpu time.Duration) {
		start, cpu0 := time.Now(), cpuTime()
		code := run(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}, append([]string{"replay"}, args...))
		if code != exitViolation {
			b.Fatalf("replay %v: exit %d, want 1 (half the leaks are not suppressed)", args, code)
		}
		return time.Since(start), cpuTime() - cpu0
	}
	var none, rules, noneCPU, rulesCPU time.Duration
	for b.Loop() {
		w, c := runReplay(trace)
		none, noneCPU = none+w, noneCPU+c
		w, c = runReplay("--suppressions", supp, trace)
		rules, rulesCPU = rules+w, rulesCPU+c
	}
	b.ReportMetric(none.Seconds()/float64(b.N), "none-s/op")
	b.ReportMetric(rules.Seconds()/float64(b.N), "rules-s/op")
	b.ReportMetric(rules.Seconds()/none.Seconds(), "rules/none")
	b.ReportMetric(rulesCPU.Seconds()/noneCPU.Seconds(), "rules/none-cpu")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
