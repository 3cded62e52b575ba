package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// renderGoals writes, for each goal of replay.md's table that the run did
// not meet, by how much it missed and why, as far as profiles of the code
// measured tell: the report says so itself, rather than a reader guessing
// from the table. Goals met need no words.
func renderGoals(p func(string, ...any), f figures) {
	var why []string
	if speedup := f.Script.wall().Seconds() / f.Tlcheck.wall().Seconds(); speedup < scriptTarget {
		need := f.Script.wall() / scriptTarget
		perEvent := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(max(f.Events, 1)) }
		why = append(why, fmt.Sprintf("**%.0fx faster than glibc's script** needs tlcheck's wall time at %s on this log (the script's %s over %d); it took %s, %.2fx that (%.1fx short). "+
			"tlcheck reads the log on one goroutine and checks it on another, so its wall time is the longer of the two: the checking, "+
			"about %.0f ns an event here (its CPU time, %s, is both goroutines together). Most of an event is cache misses: a free, and the most "+
			"common malloc (one that takes a freed block's range), are each a walk of a level-0 cell of the index and a write to the thing, "+
			"and each event looks up its where record. %.0fx needs about %.0f ns an event from each goroutine, on a machine with two cores to spare: "+
			"an index that touches fewer cache lines an event, not tuning. The script's own time moves with the machine's load "+
			"(12.39 s and 6.40 s on this machine in two reports), and the ratio with it.",
			float64(scriptTarget), seconds(need), seconds(f.Script.wall()), scriptTarget, seconds(f.Tlcheck.wall()),
			f.Tlcheck.wall().Seconds()/need.Seconds(), float64(scriptTarget)/speedup,
			perEvent(f.Tlcheck.wall()), seconds(f.Tlcheck.cpu()), float64(scriptTarget), perEvent(need)))
	}
	if f.Base != nil {
		if r := f.Tlcheck.wall().Seconds() / f.BaseTime.wall().Seconds(); r > sameOrBetter {
			why = append(why, fmt.Sprintf("**The baseline's wall time** (%s): %.2fx, %.0f%% over the %.2fx allowed (CPU time %.2fx). "+
				"Level-0 cells of the index are 1 KiB wide since 9ec19b9 (512 bytes at the baseline): on this log's small Python blocks a cell "+
				"holds twice the entries, so a lookup walks about two buckets of eight where it walked one. Measured apart from this report, "+
				"on the same log held in memory and stepped on one goroutine, the model took 8%% more CPU an event with 1 KiB cells than with "+
				"512 bytes (226 against 208 ns, medians of 6 alternating runs, load average 8 to 10), as much as the baseline (207 ns). "+
				"512-byte cells would give that time back and lose the memory goal: a log of 1,000,000 live blocks peaked at 174 MB against "+
				"124 MB (a level-0 table twice the size, its buckets half empty). The rest of the gap, if any, is the load: each figure is a "+
				"median of %d runs.",
				f.Base.Commit, r, (r/sameOrBetter-1)*100, sameOrBetter, f.Tlcheck.cpu().Seconds()/f.BaseTime.cpu().Seconds(), f.Runs))
		}
	}
	if f.Bench.Command > 1.5 {
		w := fmt.Sprintf("**JSON Lines, the command against decoding alone**: %.2fx, %.0f%% over the 1.5x allowed. "+
			"The command decodes on one goroutine and checks on another: it stays near decoding's time only while each has a core. "+
			"On one goroutine, decoding and checking took %.2fx decoding's time", f.Bench.Command, (f.Bench.Command/1.5-1)*100, f.Bench.Ratio)
		if f.Base != nil {
			w += fmt.Sprintf("; the baseline's, in the same runs, %.2fx and %.2fx", f.BaseBench.Command, f.BaseBench.Ratio)
		}
		why = append(why, w+".")
	}
	if perBlock := perLiveBlock(f.Live, f.One); perBlock > perBlockTarget {
		why = append(why, fmt.Sprintf("**Peak RSS for each live block**: %.0f bytes, %.0f over the %d allowed. "+
			"The model keeps a block in a thing of 64 bytes (its range, id and kind, its death, the events that made and ended it, "+
			"where they were) and in an entry of 16 bytes in a level-0 bucket of eight, the table at most three-quarters full and "+
			"doubling as it grows: about 34 bytes a block at this log's six or seven blocks to a 1 KiB cell, at its last size. "+
			"While it grows from one size to the next both tables are held. Less needs a smaller thing.",
			perBlock, perBlock-perBlockTarget, perBlockTarget))
	}
	if len(why) == 0 {
		return
	}
	p("## Goals not met")
	p("")
	for _, w := range why {
		p("- %s", w)
	}
	p("")
}

// loaded reports whether a load average (as machine reads it: "1.2, 0.9,
// 0.7") had more work waiting, over its last minute, than cores to run it.
func loaded(load, cores string) bool {
	one, err1 := strconv.ParseFloat(strings.TrimSuffix(strings.Fields(load + " x")[0], ","), 64)
	n, err2 := strconv.Atoi(cores)
	return err1 == nil && err2 == nil && one > float64(n)
}
