package main

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/impl/gpu/cudarec"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// cudaRecordings is where impl/gpu/cudaprobe's recordings are kept.
var cudaRecordings = filepath.Join("impl", "gpu", "testdata", "cuda")

// cudaFinding is a difference between impl/gpu and PyTorch on the GPU
// that the recordings showed, and what became of it. The list is the
// history of the comparison: the recordings agree with impl/gpu now, and
// each finding names the test that holds the fix.
type cudaFinding struct {
	What, Seen, Done, Test string
}

var cudaFindings = []cudaFinding{
	{"Sizes in the out-of-memory message",
		"PyTorch's format_size writes a size in a unit up to and including the next unit's first value: \"1024 bytes\", \"1024.00 KiB\" for 1 MiB; impl/gpu wrote \"1.00 KiB\", \"1.00 MiB\" (9 programs, e.g. default tight-0030)",
		"fixed: impl/gpu writes sizes as format_size does", "impl/gpu TestOutOfMemorySizes"},
	{"max_split_size_mb:20",
		"PyTorch 2.11 takes 20 (memory_stats()'s max_split_size 20971520) and refuses 19 and 8 with ValueError \"CachingAllocator option max_split_size_mb too small, must be >= 20\"; impl/gpu refused 20 (the 2024 source issue 20 read said over 20)",
		"fixed: NewCaching takes a whole number of MiB of at least 20; 112 programs recorded with max_split_size_mb:20 agree", "impl/gpu TestMaxSplitSizeConfig, cudarec TestRecordedCases"},
	{"requested_size of a free block",
		"memory_snapshot() shows on a free block what its last user asked for (free_block leaves requested_size; a split keeps the found block as the remainder, so the remainder inherits it); impl/gpu said 0 (42,168 blocks)",
		"fixed: impl/gpu keeps the leftover as PyTorch does; requested_bytes is unchanged", "impl/gpu TestFreeBlockRequestedSize"},
	{"The order in which pending blocks are released",
		"process_events (and release_cached_blocks' wait) walks a hash map from stream to events, stream by stream; impl/gpu released in the order the blocks were freed. Where blocks pending on streams 1 and 2 complete together the inactive_split totals differ (2 programs: split22 splitstreams-0004, split24 splitstreams-0027)",
		"fixed: impl/gpu releases stream by stream, the highest stream first, the order the H100 showed (the real order hangs on the CUDA stream handles' hashes; doc.go says so)", "impl/gpu TestEventsStreamByStream"},
	{"cudaFree waits for the whole device",
		"every step that returned a segment (release_available_cached_blocks, release_cached_blocks, empty_cache) also finished the sleeps queued on streams 1 and 2 (see Configurations): cudaFree synchronizes the device, so a block pending on another stream is released at the next malloc",
		"not the allocator's policy: impl/gpu's streams finish only when told (Synchronize); the replay tells it when the GPU's did (Step.Done), as doc.go says", "cudarec TestRecordedCUDA (pending-through-retry, issue20-pending-stays-pending)"},
}

// writeCUDAReport replays the recordings on impl/gpu and writes
// reports/cuda.md.
func writeCUDAReport(out string) error {
	files, err := cudarec.ReadDir(cudaRecordings)
	if err != nil {
		return err
	}
	step("replaying %d recordings on impl/gpu", len(files))
	sum := cudarec.Compare(files)
	tot := sum.Totals()
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# PyTorch's caching allocator on a real GPU")
	p("")
	p("Written by `go run ./reports/gen -only cuda` from the recordings in `%s`; regenerate it, never", filepath.ToSlash(cudaRecordings))
	p("edit it. The recordings were made by `impl/gpu/cudaprobe/probe.py` (its README says how); the")
	p("comparison is package `impl/gpu/cudarec`, and `go test ./impl/gpu/cudarec` runs it everywhere.")
	p("")
	var h *cudarec.Header
	for _, f := range sum.Files {
		h = f.File.Header
		break
	}
	if h == nil {
		return fmt.Errorf("no program recordings in %s", cudaRecordings)
	}
	p("Device: %s (%.2f GiB), PyTorch %s, CUDA %s, allocator backend %q. Streams 1 and 2 kept busy by a",
		h.Device, float64(h.Total)/(1<<30), h.Torch, h.CUDA, h.Backend)
	p("%.0f ms `torch.cuda._sleep`, queued again whenever it ran out. Time on the GPU for the programs,", h.SleepMS)
	p("their stats and snapshots: %.1f s.", tot.Seconds)
	p("")
	p("**%d programs, %d steps: %d programs agree with impl/gpu at every step (%d steps compared).**",
		tot.Programs, tot.Steps, tot.Agree, tot.StepsCompared)
	p("")
	p("At every step: what the malloc returned, or that it raised `torch.OutOfMemoryError` and the")
	p("sizes its message names; every counter of `memory_stats()` that impl/gpu has (current, peak,")
	p("allocated, freed; all, small and large pool); every segment and block of `memory_snapshot()`")
	p("(address, size, pool, stream, state, requested_size).")
	p("")
	p("## Configurations")
	p("")
	p("| recording | PYTORCH_CUDA_ALLOC_CONF | programs | steps | agree | OOMs | retries | cudaFree | steps with a pending block | steps a stream finished |")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, f := range sum.Files {
		c, fh := f.Coverage, f.File.Header
		conf := fh.AllocConf
		if conf == "" {
			conf = "(unset)"
		}
		p("| %s | `%s` | %d | %d | %d | %d | %d | %d | %d | %d |", f.File.Name, conf, c.Programs, c.Steps, c.Agree,
			c.OOMs, c.Retries, c.DeviceFrees, c.PendingSteps, c.Drained)
	}
	p("| all | | %d | %d | %d | %d | %d | %d | %d | %d |", tot.Programs, tot.Steps, tot.Agree, tot.OOMs, tot.Retries,
		tot.DeviceFrees, tot.PendingSteps, tot.Drained)
	p("")
	p("In the %d programs that kept streams 1 and 2 busy, %d steps called cudaFree, and after %d of them",
		countSleepers(sum), tot.BusyFrees, tot.BusyFreesDrained)
	p("both streams had finished: cudaFree waits for the whole device. %d steps saw a stream finish with", tot.Unexplained)
	p("no cudaFree, synchronize, empty_cache or retry to explain it (a sleep that ran out).")
	p("")
	p("Steps by call: %s.", counts(tot.Ops))
	p("Programs by family: %s (named: issue 20's cases and impl/gpu's release_test.go rows;", counts(tot.Families))
	p("random: 10 to 40 steps from a seed named by the program, capacities from 4 MiB to 1 GiB set with")
	p("`set_per_process_memory_fraction`).")
	p("")
	p("## Which max_split_size_mb PyTorch takes")
	p("")
	p("| PYTORCH_CUDA_ALLOC_CONF | PyTorch | impl/gpu's NewCaching | agree |")
	p("|---|---|---|---|")
	for _, c := range sum.Configs {
		real := "takes it"
		if !c.Config.Accepted {
			real = fmt.Sprintf("%s: %s", c.Config.Error, c.Config.Msg)
		}
		sim := "takes it"
		if c.Sim != nil {
			sim = c.Sim.Error()
		}
		p("| `%s` | %s | %s | %v |", c.Config.AllocConf, real, sim, yes(c.Agrees()))
	}
	p("")
	p("## Issue 20's cases and the named programs")
	p("")
	p("| recording | program | steps | agrees |")
	p("|---|---|--:|---|")
	for _, f := range sum.Files {
		for i, r := range f.Results {
			if f.File.Programs[i].Family == "named" {
				p("| %s | %s | %d | %s |", f.File.Header.Config, r.Program, len(f.File.Programs[i].Steps), yes(r.Agrees()))
			}
		}
	}
	p("")
	p("## The comparison has teeth")
	p("")
	p("Each fault of the caching allocator in impl.Catalog, switched on, replayed on every recording")
	p("(`TestRecordedCUDACatchesFaults`):")
	p("")
	p("| fault | programs that differ from CUDA |")
	p("|---|--:|")
	for _, fault := range cudarec.CachingFaults {
		t := cudarec.Compare(files, fault).Totals()
		p("| %s | %d of %d |", fault, t.Programs-t.Agree, t.Programs)
	}
	p("")
	p("## Differences found, and what was done")
	p("")
	for _, f := range cudaFindings {
		p("- **%s.** %s. *Done:* %s. *Held by:* %s.", f.What, f.Seen, f.Done, f.Test)
	}
	p("")
	p("## Not compared, by name")
	p("")
	p("- `memory_stats()` keys impl/gpu does not have: %s.", strings.Join(quote(h.NotCompared()), ", "))
	p("- In an out-of-memory message, what it says of the device (its capacity, what is free, what the")
	p("  process holds outside the allocator): impl/gpu's device is the cap alone.")
	p("- What the allocator does not decide: where cudaMalloc put a segment (the replay puts it at the")
	p("  same address: ties between free blocks of one size go by address) and when a stream's work")
	p("  finished (the replay synchronizes a stream where the GPU's finished).")
	differ := 0
	for _, f := range sum.Files {
		for i, r := range f.Results {
			if r.Agrees() {
				continue
			}
			if differ == 0 {
				p("")
				p("## Programs that differ")
				p("")
			}
			if differ++; differ <= 20 {
				p("- %s %s, step %d (%s): %s", f.File.Name, r.Program, r.Step, f.File.Programs[i].Steps[r.Step].Op, r.Mismatches[0])
			}
		}
	}
	return atomicfile.Replace(out, b.Bytes())
}

func countSleepers(sum cudarec.Summary) int {
	n := 0
	for _, f := range sum.Files {
		for _, p := range f.File.Programs {
			if p.Sleeps {
				n++
			}
		}
	}
	return n
}

func counts(m map[string]int) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}

func quote(ks []string) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = "`" + k + "`"
	}
	return out
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}
