package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// render writes the report. Figures are ratios against a baseline measured
// in the same run, so that they mean something on another machine.
func render(f figures) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	speedup := f.Script.wall().Seconds() / f.Tlcheck.wall().Seconds()
	cpuSpeedup := f.Script.cpu().Seconds() / f.Tlcheck.cpu().Seconds()
	rssRatio := float64(f.Tlcheck.MaxRSS) / float64(f.LogBytes)

	p("# Replay: speed and memory")
	p("")
	p("Written by `go run ./reports/gen` on %s; regenerate it, never edit it.", f.When.Format("2006-01-02 15:04 MST"))
	p("")
	p("| figure | measured | target | |")
	p("|---|---|---|---|")
	p("| tlcheck vs glibc's `mtrace` script, same log, wall time | **%.1fx faster** | at least %dx | %s |", speedup, scriptTarget, verdict(speedup >= scriptTarget))
	p("| the same, CPU time (user + system) | %.1fx less | | |", cpuSpeedup)
	perBlock := perLiveBlock(f.Live, f.One)
	p("| tlcheck's peak RSS for each live block (a log of %s live blocks) | **%.0f bytes** | at most %d | %s |", group(liveBlocks), perBlock, perBlockTarget, verdict(perBlock <= perBlockTarget))
	p("| tlcheck's peak RSS vs the log's size | **%.3fx** (%s of %s) | far below 1x | %s |", rssRatio, mib(f.Tlcheck.MaxRSS), mib(f.LogBytes), verdict(rssRatio < 0.1))
	p("| JSON Lines: replay wall time, as the command runs it, vs decoding alone | **%.2fx** | at most 1.5x | %s |", f.Bench.Command, verdict(f.Bench.Command <= 1.5))
	p("| the same, decoding and checking on one goroutine (the CPU cost) | %.2fx | | |", f.Bench.Ratio)
	p("| leak lists, tlcheck vs glibc's script | %s | equal | %s |", leakSummary(f.Leaks), verdict(f.Leaks.Equal))
	if f.Base != nil {
		r := f.Tlcheck.wall().Seconds() / f.BaseTime.wall().Seconds()
		p("| mtrace replay wall time vs the baseline (%s), same runs | **%.2fx** | at most %.2fx (unchanged or better) | %s |", f.Base.Commit, r, sameOrBetter, verdict(r <= sameOrBetter))
	}
	p("")

	if loaded(f.Machine.Load, f.Machine.Cores) || loaded(f.LoadAfter, f.Machine.Cores) {
		p("The machine was loaded (load average %s before the runs, %s after, on %s cores): a wall time", f.Machine.Load, f.LoadAfter, f.Machine.Cores)
		p("measured the waits for a core as much as the work, and tlcheck's two goroutines seldom ran at")
		p("once. CPU times, and their ratios, are the steadier guide.")
		p("")
	}
	renderGoals(p, f)

	p("## glibc mtrace log")
	p("")
	p("The log: %s.", f.Workload)
	p("%s lines, %s events, %s.", group(f.LogLines), group(f.Events), mib(f.LogBytes))
	p("")
	p("| checker | wall time | CPU time | events/s (wall) | peak RSS |")
	p("|---|---|---|---|---|")
	for _, t := range []timing{f.Script, f.Tlcheck} {
		p("| `%s` | %s | %s | %s | %s |", shorten(t.Command), seconds(t.wall()), seconds(t.cpu()),
			group(int(float64(f.Events)/t.wall().Seconds())), mib(t.MaxRSS))
	}
	p("")
	p("Times are medians of %d runs, the checkers taking turns, each round starting with the next one. tlcheck reads the", f.Runs)
	p("log on one goroutine and checks it on another, so its CPU time can exceed its")
	p("wall time; the script runs on one core. Peak RSS is the kernel's maximum")
	p("resident set for the process (getrusage).")
	p("")
	p("Peak RSS for each live block is tlcheck's peak RSS (%s) on a log of %s mallocs of 8 to 256", mib(f.Live.MaxRSS), group(liveBlocks))
	p("bytes from 50 call sites, then their frees, less its peak RSS on a log of one line (%s),", mib(f.One.MaxRSS))
	p("over those blocks: the model's state for each live block, mostly (the largest of %d runs each).", f.Runs)
	p("")
	p("The leak lists are compared as multisets of (address, size): the script's")
	p("\"Memory not freed\" table against tlcheck's leak violations, each sized by")
	p("the log line its history names as where the block was allocated.")
	for _, d := range f.Leaks.Diff {
		p("- %s", d)
	}
	p("")

	p("## JSON Lines: replay vs decode")
	p("")
	p("BenchmarkJSONL of cmd/tlcheck's tests, %d runs of `-test.count 1`: one generated trace of", f.BenchCount)
	p("about 200k events over all four layers (scopes, tensors, structs and params; arena")
	p("frames; device pool blocks; malloc, realloc and free; reads and writes). Each")
	p("iteration decodes it alone, then decodes and replays it through the model on one")
	p("goroutine (replay/decode, the CPU cost), then replays it as `tlcheck replay` does,")
	p("reading ahead on a goroutine of its own (command/decode, the wall time a user")
	p("waits), so all three are timed under the same conditions.")
	p("")
	p("| | events/s (median) |")
	p("|---|---|")
	p("| decode only | %s |", group(int(f.Bench.Decode)))
	p("| decode and replay | %s |", group(int(f.Bench.Replay)))
	p("")
	p("```")
	p("%s", f.Bench.Raw)
	p("```")
	p("")

	if f.Base != nil {
		renderBaseline(p, f)
	}

	p("## Machine")
	p("")
	m := f.Machine
	p("- CPU: %s, %s cores seen by Go", m.CPU, m.Cores)
	p("- memory: %s", m.Memory)
	p("- kernel: %s", m.Kernel)
	p("- Go: %s", m.Go)
	p("- glibc: %s", m.Glibc)
	p("- %s", m.Perl)
	p("- load average before the runs: %s; after them: %s (2 cores: a load above 2 means other work waited for a core, and so did these runs)", m.Load, f.LoadAfter)
	return b.Bytes()
}

// The targets of issue 28: at least scriptTarget times as fast as glibc's
// script, at most perBlockTarget bytes of peak RSS for each live block.
const (
	scriptTarget   = 25
	perBlockTarget = 100
)

// sameOrBetter is the largest ratio to the baseline that the report calls
// unchanged: on a shared machine, medians of a handful of runs move by a
// few percent from one run of the report to the next.
const sameOrBetter = 1.05

// renderBaseline writes the section that compares the working tree with
// the baseline revision, both measured in the same runs.
func renderBaseline(p func(string, ...any), f figures) {
	b, t := f.BaseTime, f.Tlcheck
	p("## Against the baseline")
	p("")
	p("The baseline is %s (`-baseline %s`), built from the repository's history", f.Base.Commit, f.Base.Rev)
	p("with its own `default.pgo`. Its tlcheck took turns with the working tree's and")
	p("with the script on the same log, and its BenchmarkJSONL took turns with the")
	p("working tree's, so each ratio below compares runs made side by side.")
	p("")
	p("| figure | baseline | now | now / baseline |")
	p("|---|---|---|---|")
	p("| mtrace replay, wall time (median) | %s | %s | %.2fx |", seconds(b.wall()), seconds(t.wall()), t.wall().Seconds()/b.wall().Seconds())
	p("| mtrace replay, CPU time (median) | %s | %s | %.2fx |", seconds(b.cpu()), seconds(t.cpu()), t.cpu().Seconds()/b.cpu().Seconds())
	p("| mtrace replay, peak RSS | %s | %s | %.2fx |", mib(b.MaxRSS), mib(t.MaxRSS), float64(t.MaxRSS)/float64(b.MaxRSS))
	bp, np := perLiveBlock(f.BaseLive, f.BaseOne), perLiveBlock(f.Live, f.One)
	p("| peak RSS for each live block | %.0f bytes | %.0f bytes | %.2fx |", bp, np, np/bp)
	p("| JSON Lines, command/decode | %.2fx | %.2fx | %.2fx |", f.BaseBench.Command, f.Bench.Command, f.Bench.Command/f.BaseBench.Command)
	p("| JSON Lines, replay/decode (one goroutine) | %.2fx | %.2fx | %.2fx |", f.BaseBench.Ratio, f.Bench.Ratio, f.Bench.Ratio/f.BaseBench.Ratio)
	p("| JSON Lines, decode only, events/s | %s | %s | %.2fx |", group(int(f.BaseBench.Decode)), group(int(f.Bench.Decode)), f.Bench.Decode/f.BaseBench.Decode)
	p("")
	p("The baseline's benchmark lines:")
	p("")
	p("```")
	p("%s", f.BaseBench.Raw)
	p("```")
	p("")
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func leakSummary(c leakCompare) string {
	if c.Equal {
		return fmt.Sprintf("equal: %s blocks, %s bytes", group(c.Script), group(int(c.ScriptBytes)))
	}
	return fmt.Sprintf("**differ**: script %d blocks (%d bytes), tlcheck %d (%d bytes)", c.Script, c.ScriptBytes, c.Tlcheck, c.TlcheckBytes)
}

// shorten drops the work directory from a command line.
func shorten(cmd string) string {
	fields := strings.Fields(cmd)
	for i, f := range fields {
		if filepath.IsAbs(f) {
			fields[i] = filepath.Base(f)
		}
	}
	return strings.Join(fields, " ")
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func itoa(n int) string { return strconv.Itoa(n) }

// group writes n with thousands separated: 4,012,345.
func group(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
