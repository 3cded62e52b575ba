package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// The readers report (-only readers, reports/readers.md): tlcheck's
// readers of other programs' files against those programs' own readers,
// timed in the same runs. PyTorch memory snapshots, generated at three
// sizes by traces/torchsnap/testdata/make_big_snapshot.py (a trace of 12
// frames an entry, as the issue that set the targets measured), against
// Python's pickle.load of the same file; and a glibc mtrace log against
// glibc's mtrace script, with tlcheck's peak memory per block live at the
// log's peak.

// defaultSnapshots are the entries of the three snapshots: about 33 MB,
// 77 MB and 200 MB.
const defaultSnapshots = "60000,146000,380000"

// pickleLoad is Python's reader of a snapshot, alone.
const pickleLoad = `import pickle, sys
with open(sys.argv[1], "rb") as f:
    pickle.load(f)
`

type snapshotRow struct {
	Entries int
	Bytes   int64
	Python  timing
	Tlcheck timing
}

type readersFigures struct {
	figures
	Snapshots []snapshotRow
	PeakLive  int   // blocks live at the log's peak
	EmptyRSS  int64 // tlcheck's peak RSS on a log of one line
	// Live is tlcheck on a log that only allocates: LiveBlocks blocks, all
	// live at its end, enough for the model's state to dwarf the process's
	// own (the Python log's peak is too few for that).
	Live       timing
	LiveBlocks int
}

// liveBlocks is the size of the log that measures memory per live block.
const liveBlocks = 1_000_000

// writeLiveLog writes an mtrace log of n mallocs of 8 to 256 bytes from
// 50 call sites, then their n frees: all n are live at its midpoint, and
// none is left for the leak check, whose report is not the model's state.
//
// It streams to the file: a child's peak RSS, as Linux reports it, counts
// the parent's at the fork, so the generator must not hold the log.
func writeLiveLog(path string, n int) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	b := bufio.NewWriter(fh)
	b.WriteString("= Start\n")
	const first = 0x10000000
	addr := uint64(first)
	for i := range n {
		size := uint64(8 + (i*37)%249)
		fmt.Fprintf(b, "@ ./app:[0x%x] + 0x%x 0x%x\n", 0x401000+(i%50)*0x40, addr, size)
		addr += (size + 31) &^ 15
	}
	addr = first
	for i := range n {
		size := uint64(8 + (i*37)%249)
		fmt.Fprintf(b, "@ ./app:[0x402000] - 0x%x\n", addr)
		addr += (size + 31) &^ 15
	}
	if err := b.Flush(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func writeReaders(tlcheck, work, out string, runs, iterations int, snapshots string) error {
	f := readersFigures{figures: figures{When: time.Now().UTC(), Machine: describeMachine(), Runs: runs}}
	script := filepath.Join("traces", "torchsnap", "testdata", "make_big_snapshot.py")
	var sizes []int
	for _, s := range strings.Split(snapshots, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-snapshots: %q is not a number of entries", s)
		}
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		snap := filepath.Join(work, fmt.Sprintf("snapshot-%d.pickle", n))
		step("making a snapshot of %d entries", n)
		if err := command("python3", script, fmt.Sprint(n), snap).Run(); err != nil {
			return fmt.Errorf("making a snapshot: %w", err)
		}
		size, _, err := sizeOf(snap)
		if err != nil {
			return err
		}
		step("timing Python's pickle.load and tlcheck replay on %s (%d runs each, interleaved)", mib(size), runs)
		ts, err := timeInterleaved(runs,
			job{filepath.Join(work, "load.out"), "python3", []string{"-c", pickleLoad, snap}},
			job{filepath.Join(work, "snap.json"), tlcheck, []string{"replay", "--from", "torch-snapshot", "--json", snap}},
		)
		if err != nil {
			return err
		}
		ts[0].Command = "python3 -c 'pickle.load(open(FILE, \"rb\"))' " + filepath.Base(snap)
		f.Snapshots = append(f.Snapshots, snapshotRow{n, size, ts[0], ts[1]})
		os.Remove(snap)
	}

	log, err := f.makeLog(work, iterations)
	if err != nil {
		return err
	}
	if f.PeakLive, err = peakLive(log); err != nil {
		return err
	}
	one := filepath.Join(work, "one.mtrace")
	if err := os.WriteFile(one, []byte("= Start\n"), 0o644); err != nil {
		return err
	}
	ts, err := f.timeLog(append(onLog(tlcheck, work, log),
		job{filepath.Join(work, "one.json"), tlcheck, []string{"replay", "--from", "mtrace", "--json", one}})...)
	if err != nil {
		return err
	}
	f.EmptyRSS = ts[2].MaxRSS
	live := filepath.Join(work, "live.mtrace")
	step("timing tlcheck on a log of %d live blocks", liveBlocks)
	if err := writeLiveLog(live, liveBlocks); err != nil {
		return err
	}
	ts, err = timeInterleaved(runs,
		job{filepath.Join(work, "live.json"), tlcheck, []string{"replay", "--from", "mtrace", "--json", live}},
	)
	if err != nil {
		return err
	}
	f.Live, f.LiveBlocks = ts[0], liveBlocks
	os.Remove(live)
	step("writing %s", out)
	return atomicfile.Replace(out, renderReaders(f))
}

// peakLive counts the blocks live at the log's peak, as its + and -
// lines (and > and <, realloc's halves) make and free them.
func peakLive(log string) (int, error) {
	fh, err := os.Open(log)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	live := make(map[string]bool)
	peak := 0
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fs := bytes.Fields(sc.Bytes())
		if len(fs) > 0 && string(fs[0]) == "@" {
			fs = fs[min(2, len(fs)):]
		}
		if len(fs) < 2 {
			continue
		}
		switch string(fs[0]) {
		case "+", ">":
			live[string(fs[1])] = true
		case "-", "<":
			delete(live, string(fs[1]))
		}
		peak = max(peak, len(live))
	}
	return peak, sc.Err()
}

func renderReaders(f readersFigures) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# Readers: speed and memory")
	p("")
	p("Written by `go run ./reports/gen -only readers` on %s; regenerate it, never edit it.", f.When.Format("2006-01-02 15:04 MST"))
	p("")
	p("| figure | measured | target | |")
	p("|---|---|---|---|")
	for _, s := range f.Snapshots {
		t := s.Tlcheck.wall().Seconds() / s.Python.wall().Seconds()
		m := float64(s.Tlcheck.MaxRSS) / float64(s.Python.MaxRSS)
		p("| snapshot of %s (%s entries): tlcheck replay vs Python's `pickle.load`, wall time | **%.2fx** | at most 1.0x | %s |", mib(s.Bytes), group(s.Entries), t, verdict(t <= 1.0))
		p("| the same, peak RSS | **%.2fx** (%s of %s) | at most 0.5x | %s |", m, mib(s.Tlcheck.MaxRSS), mib(s.Python.MaxRSS), verdict(m <= 0.5))
	}
	speedup := f.Script.wall().Seconds() / f.Tlcheck.wall().Seconds()
	perBlock := float64(f.Live.MaxRSS-f.EmptyRSS) / float64(max(f.LiveBlocks, 1))
	p("| mtrace log: tlcheck vs glibc's `mtrace` script, wall time | **%.1fx faster** | at least 10x | %s |", speedup, verdict(speedup >= 10))
	p("| tlcheck's peak RSS for each live block (a log of %s live blocks) | **%.0f bytes** | at most %d | %s |", group(f.LiveBlocks), perBlock, perBlockTarget, verdict(perBlock <= perBlockTarget))
	p("")
	p("## PyTorch memory snapshots")
	p("")
	p("Snapshots made by `traces/torchsnap/testdata/make_big_snapshot.py` with Python's own pickle (protocol 4): a trace of alloc, free_requested and free_completed entries, each with 12 frames made afresh (filenames shared, function names not), about 525 bytes an entry. tlcheck replay reads the snapshot, checks it, and writes its JSON report; Python only loads it.")
	p("")
	p("| snapshot | reader | wall time | CPU time | peak RSS |")
	p("|---|---|---|---|---|")
	for _, s := range f.Snapshots {
		for _, t := range []timing{s.Python, s.Tlcheck} {
			p("| %s, %s entries | `%s` | %.2f s | %.2f s | %s |", mib(s.Bytes), group(s.Entries), strings.ReplaceAll(shorten(t.Command), "|", `\|`), t.wall().Seconds(), t.cpu().Seconds(), mib(t.MaxRSS))
		}
	}
	p("")
	p("## glibc mtrace log")
	p("")
	p("The log: %s. %s lines, %s, %s blocks live at its peak.", f.Workload, group(f.LogLines), mib(f.LogBytes), group(f.PeakLive))
	p("")
	p("| checker | wall time | CPU time | peak RSS |")
	p("|---|---|---|---|")
	for _, t := range []timing{f.Script, f.Tlcheck} {
		p("| `%s` | %.2f s | %.2f s | %s |", shorten(t.Command), t.wall().Seconds(), t.cpu().Seconds(), mib(t.MaxRSS))
	}
	p("")
	p("Peak RSS for each live block is tlcheck's peak RSS (%s) on a log of %s mallocs of 8 to 256 bytes from 50 call sites, then their frees, less its peak RSS on a log of one line (%s), over those blocks: the model's state for each live block, mostly, which the readers do not hold. (The Python log's %s blocks live at its peak are too few to measure it by.)", mib(f.Live.MaxRSS), group(f.LiveBlocks), mib(f.EmptyRSS), group(f.PeakLive))
	p("")
	p("Times are medians of %d runs, the readers taking turns. Peak RSS is the kernel's maximum resident set for the process (getrusage).", f.Runs)
	p("")
	p("## Machine")
	p("")
	p("%s, %s cores, %s; %s; %s; load average before the runs: %s.", f.Machine.CPU, f.Machine.Cores, f.Machine.Memory, f.Machine.Kernel, f.Machine.Go, f.Machine.Load)
	return b.Bytes()
}
