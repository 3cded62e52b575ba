package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// The leak-scale report: what a trace that leaks millions of objects
// costs tlcheck replay, listing every leak (as replay did before it summed
// leaks by site) against the human report's default and a bounded JSON
// report, timed in the same run. It writes reports/leaks.md.

// leakSites is how many allocation sites the generated leaks come from.
const leakSites = 7

// scaleFigures is what the leak-scale report states.
type scaleFigures struct {
	When     time.Time
	Machine  machine
	Leaks    int
	Bytes    int64 // the trace's size
	Runs     int
	Timings  []timing
	Outputs  []int64 // bytes each command printed
	Commands []string
}

// writeLeakScale makes a trace of n leaked blocks in work, times the
// three ways of replaying it, and writes the report to out.
func writeLeakScale(tlcheck, work, out string, n, runs int) error {
	f := scaleFigures{When: time.Now().UTC(), Machine: describeMachine(), Leaks: n, Runs: runs}
	trace := filepath.Join(work, "leaks.jsonl")
	step("making a trace of %d leaks", n)
	if err := leakTrace(trace, n); err != nil {
		return err
	}
	st, err := os.Stat(trace)
	if err != nil {
		return err
	}
	f.Bytes = st.Size()
	jobs := []job{
		{filepath.Join(work, "all.json"), tlcheck, []string{"replay", "--json", "--max-findings", "0", trace}},
		{filepath.Join(work, "text.txt"), tlcheck, []string{"replay", trace}},
		{filepath.Join(work, "bounded.json"), tlcheck, []string{"replay", "--json", "--max-findings", "1000", trace}},
	}
	step("timing replay of %d leaks three ways (%d runs each, interleaved)", n, runs)
	if f.Timings, err = timeInterleaved(runs, jobs...); err != nil {
		return err
	}
	for i := range f.Timings { // the report names no path of this machine
		f.Timings[i].Command = strings.ReplaceAll(f.Timings[i].Command, trace, filepath.Base(trace))
	}
	for _, j := range jobs {
		st, err := os.Stat(j.out)
		if err != nil {
			return err
		}
		f.Outputs = append(f.Outputs, st.Size())
	}
	step("writing %s", out)
	return atomicfile.Replace(out, renderScale(f))
}

// leakTrace writes a stream of n mallocs from leakSites sites, then end.
func leakTrace(path string, n int) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(file, 1<<20)
	fmt.Fprintln(w, `{"format":"tlcheck-trace","version":1,"source":"reports/gen: leaks at scale"}`)
	for i := range n {
		fmt.Fprintf(w, `{"op":"malloc","addr":"0x%x","size":48,"site":"alloc.c:%d"}`+"\n", 0x10000000+64*i, 10+i%leakSites)
	}
	fmt.Fprintln(w, `{"op":"end"}`)
	if err := w.Flush(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

func renderScale(f scaleFigures) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	all, text, bounded := f.Timings[0], f.Timings[1], f.Timings[2]
	p("# Replay: a trace that leaks millions of objects")
	p("")
	p("Written by `go run ./reports/gen` on %s; regenerate it, never edit it.", f.When.Format("2006-01-02 15:04 MST"))
	p("")
	p("The trace: %s blocks of 48 bytes malloc'd from %d sites and never freed, then `end` (%s).", group(f.Leaks), leakSites, mib(f.Bytes))
	p("The baseline lists every leak, as `tlcheck replay` did before leaks were summed by site; the others are")
	p("the human report as it runs by default (1000 violations listed, the leaks summed by site) and a JSON")
	p("report bounded with `--max-findings 1000`. Medians of %d interleaved runs; peak RSS is the largest.", f.Runs)
	p("")
	p("| command | wall time | vs baseline | peak RSS | vs baseline | output |")
	p("|---|---|---|---|---|---|")
	for i, t := range f.Timings {
		p("| `%s` | %s | %.2fx | %s | %.2fx | %s |", t.Command, t.wall().Round(time.Millisecond),
			t.wall().Seconds()/all.wall().Seconds(), mib(t.MaxRSS), float64(t.MaxRSS)/float64(all.MaxRSS), size(f.Outputs[i]))
	}
	p("")
	p("The human report is %.1fx faster than the baseline and needs %.2fx its memory; the bounded JSON report %.1fx",
		all.wall().Seconds()/text.wall().Seconds(), float64(text.MaxRSS)/float64(all.MaxRSS), all.wall().Seconds()/bounded.wall().Seconds())
	p("and %.2fx. What remains is the model's own books: %s live blocks until `end`, about 90 bytes each.",
		float64(bounded.MaxRSS)/float64(all.MaxRSS), group(f.Leaks))
	p("")
	p("## Machine")
	p("")
	p("%s, %s cores, %s; %s; %s. Load average at the start: %s.", f.Machine.CPU, f.Machine.Cores, f.Machine.Memory,
		f.Machine.Kernel, f.Machine.Go, f.Machine.Load)
	return b.Bytes()
}

// size writes a byte count for a person.
func size(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return mib(n)
}
