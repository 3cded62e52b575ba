package explain

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/internal/safetext"
)

// WriteText writes ex for a person: the out-of-memory error and the state
// at it, then each setting's replay, then the validation.
func WriteText(w io.Writer, ex *Explanation) error {
	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	if o := ex.OOM; o != nil {
		site := ""
		if o.Site != "" {
			site = " at " + safetext.Escape(o.Site)
		}
		p("OUT OF MEMORY before event %d%s: a request of %s on stream %d\n", o.Event, site, size(o.Request), o.Stream)
		for _, f := range o.Stack {
			p("    %s  %s:%d\n", safetext.Escape(f.Name), safetext.Escape(f.File), f.Line)
		}
		p("  the device had %s free; the process could reserve %s (%s)\n", size(o.DeviceFree), size(ex.Capacity), capacityFrom(ex.CapacityFrom))
		if o.Reserved == 0 && len(o.Pools) == 0 {
			p("  the allocator's state then is not known: the recorded setting could not be replayed\n")
		} else {
			p("  allocated %s, reserved %s: %s reserved but free\n", size(o.Allocated), size(o.Reserved), size(o.ReservedFree))
		}
		if len(o.Pools) > 0 {
			p("  the cache, by pool and stream:\n")
			for _, pl := range o.Pools {
				p("    %s pool, stream %d: %s, %s reserved, %s free, the largest free block %s\n",
					pl.Pool, pl.Stream, plural.Count(pl.Segments, "segment"), size(pl.Reserved), size(pl.Free), size(pl.LargestFree))
			}
		}
		if len(o.Sites) > 0 {
			p("  the sites that held the most:\n")
			for _, s := range o.Sites {
				p("    %10s in %-10s  %s\n", size(s.Bytes), plural.Count(s.Blocks, "block"), safetext.Escape(siteName(s.Site)))
			}
		}
	} else {
		p("NO OUT-OF-MEMORY ERROR: the snapshot has no oom entry; the replays run to its end\n")
	}
	if ex.Seeded > 0 {
		exact := "each where the snapshot had it"
		if !ex.SeedExact {
			exact = "not all where the snapshot had them: the replays approximate"
		}
		p("  %d blocks were live before the recording began: each replay makes them first, %s\n", ex.Seeded, exact)
	}
	p("\nWHAT IF (replayed through impl/gpu's caching allocator, %s):\n", capacityLine(ex))
	p("  %-34s %14s %14s  %s\n", "setting", "peak reserved", "peak allocated", "the request")
	for i, o := range ex.WhatIf {
		name := o.Setting.String()
		if i == 0 {
			name += map[string]string{"given": " (recorded, as given)", "snapshot": " (recorded)", "default": " (recorded, assumed)"}[ex.RecordedFrom]
		}
		if !o.Modelled {
			p("  %-34s %s\n", name, o.Why)
			continue
		}
		p("  %-34s %14s %14s  %s\n", name, size(o.PeakReserved), size(o.PeakAllocated), verdict(ex, o))
	}
	v := ex.Validation
	if v.Agrees {
		p("\nVALIDATED: under the recorded setting the replay reserved what the snapshot's segments held at each of %d comparisons (%d segment entries), and handed out %d of its %d allocations at the snapshot's own address\n",
			v.Compared, v.Checked, v.SameAddress, v.Allocs)
	} else {
		p("\nNOT VALIDATED: the replay under the recorded setting disagrees with the snapshot, %s; the figures above are the model's, not the run's (was it recorded under another setting? --recorded)\n", v.Disagreement)
	}
	return b.Flush()
}

// WriteJSON writes ex as one JSON object, strings from the snapshot
// escaped as the JSON formats escape them.
func WriteJSON(w io.Writer, ex *Explanation) error {
	j, err := json.Marshal(ex)
	if err != nil {
		return err
	}
	j = safetext.JSON(j)
	_, err = w.Write(append(j, '\n'))
	return err
}

func verdict(ex *Explanation, o Outcome) string {
	switch {
	case o.RanOutAt >= 0:
		return fmt.Sprintf("runs out earlier, at event %d", o.RanOutAt)
	case ex.OOM == nil:
		return "no request to serve"
	case o.Fits:
		return "fits"
	}
	return "does not fit"
}

func capacityFrom(from string) string {
	switch from {
	case "oom":
		return "reserved at the error plus the device's free bytes"
	case "given":
		return "as given"
	}
	return "not known"
}

func capacityLine(ex *Explanation) string {
	if ex.CapacityFrom == "unknown" {
		return "on a device without limit, since its capacity is not known"
	}
	return "on a device of " + size(ex.Capacity)
}

func siteName(s string) string {
	if s == "" {
		return "(no site)"
	}
	return s
}

// size writes n bytes as PyTorch's format_size does.
func size(n uint64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}
