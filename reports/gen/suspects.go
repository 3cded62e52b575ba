package main

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// loopTally is what the detector and the replay did on one kind of loop.
type loopTally struct {
	snapshots, short, kept, found, missed, invented, noPeriod int
	agree, checked, entries                                   int
	suspectTime, whatIfTime                                   time.Duration
	whatIfEntries                                             int // entries replayed, over every setting
}

// suspectConfigs is the grid of generated loops: sizes, batch jitter,
// recording from the start, mid-run and through a ring buffer, the
// recorded setting, and a device small enough to run out.
func suspectConfigs() []snapgen.Config {
	var out []snapgen.Config
	for _, loop := range []snapgen.Loop{snapgen.Train, snapgen.KeepLoss, snapgen.KeepGraph} {
		for _, steps := range []int{4, 12, 40} {
			for _, layers := range []int{2, 6} {
				for seed := uint64(0); seed < 3; seed++ {
					for rec := range 3 {
						for _, split := range []uint64{0, 40 << 20} {
							c := snapgen.Config{Loop: loop, Steps: steps, Layers: layers, Seed: seed, MaxSplitSize: split,
								Hidden: 512 << (seed % 2), Batch: 32 << seed}
							switch rec {
							case 1:
								c.RecordFrom = 2
							case 2:
								c.MaxEntries = 60 * (layers + 4) * 8 // about 8 iterations
							}
							if seed == 2 && loop == snapgen.KeepGraph {
								c.Capacity = 256 << 20
							}
							out = append(out, c)
						}
					}
				}
			}
		}
	}
	return out
}

// writeSuspectsReport runs the leak-suspect detector and the what-if
// replay on every generated loop and writes reports/suspects.md.
func writeSuspectsReport(out string) error {
	configs := suspectConfigs()
	step("detecting suspects in %d generated snapshots, and replaying each under %d settings", len(configs), modelledSettings())
	tally := map[snapgen.Loop]*loopTally{}
	var misses []string
	for _, c := range configs {
		s, err := snapgen.Generate(c)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := s.WritePickle(&buf); err != nil {
			return err
		}
		t := tally[c.Loop]
		if t == nil {
			t = &loopTally{}
			tally[c.Loop] = t
		}
		t.snapshots++
		t.entries += len(s.Entries)

		r, err := torchsnap.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			return err
		}
		start := time.Now()
		res, err := suspect.Find(r, suspect.Options{})
		if err != nil {
			return err
		}
		t.suspectTime += time.Since(start)
		var got []string
		for _, x := range res.Suspects {
			got = append(got, x.Site)
		}
		want := c.Loop.KeptSites()
		if len(s.Iterations) < 4 {
			// Fewer than 3 complete iterations recorded: too short to
			// judge, and a suspect named would be invented.
			t.short++
			want = nil
		}
		if res.Iteration.Site == "" {
			t.noPeriod++
		}
		t.kept += len(want)
		for _, w := range want {
			if slices.Contains(got, w) {
				t.found++
			} else {
				t.missed++
			}
		}
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.invented++
			}
		}
		if len(misses) < 12 && !slices.Equal(sorted(got), want) {
			misses = append(misses, fmt.Sprintf("%v, %d steps (%d recorded), %d layers, seed %d, record-from %d, max-entries %d, max-split %d MiB: named %q (%s); kept %q",
				c.Loop, c.Steps, len(s.Iterations), c.Layers, c.Seed, c.RecordFrom, c.MaxEntries, c.MaxSplitSize>>20, got, res.Iteration.Reason, want))
		}

		r, err = torchsnap.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			return err
		}
		start = time.Now()
		ex, err := explain.Explain(r, explain.Options{})
		if err != nil {
			return err
		}
		t.whatIfTime += time.Since(start)
		for _, w := range ex.WhatIf {
			if w.Modelled {
				t.whatIfEntries += len(s.Entries)
			}
		}
		if ex.Validation.Agrees {
			t.agree++
		}
		t.checked += ex.Validation.Checked
	}

	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	m := describeMachine()
	p("# Leak suspects and what-if replays on generated training loops")
	p("")
	p("Written by `go run ./reports/gen -only suspects`; regenerate it, never edit it. The snapshots are")
	p("made by `internal/snapgen`: a small model's loop (Linear and ReLU layers, cross_entropy,")
	p("backward, AdamW, zero_grad) run on impl/gpu's caching allocator and pickled as PyTorch 2.x's")
	p("`_snapshot()`, over a grid of %d loops: 4, 12 and 40 steps; 2 and 6 layers; three batch and", len(configs))
	p("width sizes, the third varying its batch every step; recorded from the start, from step 2,")
	p("and through a ring buffer of about 8 iterations' entries; under the default setting and")
	p("`max_split_size_mb:40`; the graph-keeping loop's third size on a 256 MiB device, where it runs")
	p("out of memory. Each snapshot is read by traces/torchsnap, searched by `check/suspect` (the")
	p("iteration detected, not named) and explained by `explain` (the default what-ifs).")
	p("")
	p("Measured %s on %s (%s cores, %s), %s; load %s.", time.Now().UTC().Format("2006-01-02"), m.CPU, m.Cores, m.Memory, m.Go, m.Load)
	p("")
	p("## Suspects found and invented")
	p("")
	p("A loop's kept sites are the truth (`snapgen.Loop.KeptSites`): none for the normal loop,")
	p("cross_entropy's for the loss-keeping loop, the input, ReLU and head sites for the graph-keeping")
	p("one. Found: a kept site named; missed: one not named; invented: a site named that the loop")
	p("does not keep. A detector needs 3 complete iterations, so 4 iterations recorded; a snapshot")
	p("with fewer (4 steps recorded from step 2, or a ring buffer that kept less, or a device that ran")
	p("out early) is too short: its truth is no suspect, and it should say it found no period. A")
	p("model of identical layers recorded over so few iterations repeats at the layer as a loop does")
	p("at the iteration, and the detector may take a layer for an iteration (an evaluation loop's")
	p("kept activations then read as kept every layer): the invented suspects below are those.")
	p("")
	p("| loop | snapshots | too short | kept sites | found | missed | invented | no period | detection (entries/s) |")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, l := range []snapgen.Loop{snapgen.Train, snapgen.KeepLoss, snapgen.KeepGraph} {
		t := tally[l]
		p("| %s | %d | %d | %d | %d | %d | %d | %d | %s |", l, t.snapshots, t.short, t.kept, t.found, t.missed, t.invented, t.noPeriod,
			rate(t.entries, t.suspectTime))
	}
	p("")
	if len(misses) > 0 {
		p("Snapshots where the detector and the truth differ (the first %d):", len(misses))
		p("")
		for _, s := range misses {
			p("- %s", s)
		}
		p("")
	}
	p("## What-if replays")
	p("")
	p("Each snapshot replayed through impl/gpu's caching allocator under the recorded setting, which")
	p("must reserve what the snapshot's segments held after every alloc, free and oom entry, and")
	p("under the other %d modelled settings of `explain.DefaultSettings`. Speed: trace entries", modelledSettings()-1)
	p("replayed per second, every setting's replay counted, reading excluded (`go test -bench")
	p("WhatIf ./explain` measures the same on one snapshot).")
	p("")
	p("| loop | snapshots | validated | segment entries compared | replay (entries/s) |")
	p("|---|---:|---:|---:|---:|")
	for _, l := range []snapgen.Loop{snapgen.Train, snapgen.KeepLoss, snapgen.KeepGraph} {
		t := tally[l]
		p("| %s | %d | %d | %d | %s |", l, t.snapshots, t.agree, t.checked, rate(t.whatIfEntries, t.whatIfTime))
	}
	if err := writeWhatIfExample(p); err != nil {
		return err
	}
	return atomicfile.Replace(out, b.Bytes())
}

// writeWhatIfExample explains a loop of varied batch sizes whose cache
// fragments until a 508 MiB device runs out (explain's TestWhatIfFits).
func writeWhatIfExample(p func(string, ...any)) error {
	cfg := snapgen.Config{Loop: snapgen.Train, Steps: 12, Layers: 2, Hidden: 2048, Vocab: 8192, Batch: 512,
		Seed: 1, Spread: 8, Capacity: 508 << 20}
	s, err := snapgen.Generate(cfg)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		return err
	}
	r, err := torchsnap.NewReader(&buf)
	if err != nil {
		return err
	}
	ex, err := explain.Explain(r, explain.Options{})
	if err != nil {
		return err
	}
	var text bytes.Buffer
	if err := explain.WriteText(&text, ex); err != nil {
		return err
	}
	p("")
	p("## What would have fit")
	p("")
	p("A loop whose batches vary from 64 to 512 rows (`snapgen.Config.Spread`: sequences of varied")
	p("length), 2048 wide, on a device of 508 MiB: its cache fragments, and its third step runs out of")
	p("memory. `tlcheck explain` on its snapshot (`explain`'s TestWhatIfFits holds the verdicts):")
	p("")
	p("```")
	b := bytes.TrimRight(text.Bytes(), "\n")
	b = bytes.ReplaceAll(b, []byte("/opt/conda/lib/python3.11/site-packages/"), []byte(".../"))
	p("%s", b)
	p("```")
	return nil
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func modelledSettings() int {
	n := 0
	for _, s := range explain.DefaultSettings() {
		if !s.ExpandableSegments && s.RoundupPower2Divisions == 0 && s.GarbageCollectionThreshold == 0 {
			n++
		}
	}
	return n
}

func rate(n int, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(n)/d.Seconds())
}
