package explain_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/internal/snapgen"
)

// TestValidationFails: a replay that disagrees with the recorded segments
// is reported as such, whether the snapshot was altered or recorded under
// another setting than the one given.
func TestValidationFails(t *testing.T) {
	tamper := []struct {
		name string
		cfg  snapgen.Config
		edit func(s *snapgen.Snapshot)
		rec  string
	}{
		{"a segment_alloc of another size", snapgen.Config{Loop: snapgen.Train, Steps: 4}, func(s *snapgen.Snapshot) {
			for i := range s.Entries {
				if s.Entries[i].Action == "segment_alloc" {
					s.Entries[i].Size += 2 << 20
					return
				}
			}
		}, ""},
		{"a segment_free dropped", snapgen.Config{Loop: snapgen.Train, Steps: 4, Capacity: 1 << 30, Request: 900 << 20}, func(s *snapgen.Snapshot) {
			for i := len(s.Entries) - 1; i >= 0; i-- {
				if s.Entries[i].Action == "segment_free" {
					s.Entries = append(s.Entries[:i], s.Entries[i+1:]...)
					return
				}
			}
		}, ""},
		{"recorded under max_split_size_mb, replayed as default", snapgen.Config{Loop: snapgen.Train, Hidden: 2048, Steps: 6, MaxSplitSize: 20 << 20}, nil, ""},
		{"recorded as default, replayed under max_split_size_mb", snapgen.Config{Loop: snapgen.Train, Hidden: 2048, Steps: 6}, nil, "max_split_size_mb:20"},
	}
	for _, c := range tamper {
		t.Run(c.name, func(t *testing.T) {
			s, err := snapgen.Generate(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(s)
			}
			var buf bytes.Buffer
			if err := s.WritePickle(&buf); err != nil {
				t.Fatal(err)
			}
			rec, err := explain.ParseSetting(c.rec)
			if err != nil {
				t.Fatal(err)
			}
			ex := explainBytes(t, buf.Bytes(), explain.Options{Recorded: &rec})
			if ex.Validation.Agrees || ex.Validation.Disagreement == "" {
				t.Errorf("validation %+v; want a disagreement", ex.Validation)
			}
			var text strings.Builder
			if err := explain.WriteText(&text, ex); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "NOT VALIDATED") {
				t.Errorf("the text does not say the replay disagrees:\n%s", text.String())
			}
		})
	}
}

// TestOOMExplained: a loop that keeps its graphs until the device is full
// is explained by its state at the error, from a replay that agrees.
func TestOOMExplained(t *testing.T) {
	cfg := snapgen.Config{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 300 << 20}
	s, err := snapgen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	oom := s.Entries[len(s.Entries)-1]
	var buf bytes.Buffer
	s.WritePickle(&buf)
	ex := explainBytes(t, buf.Bytes(), explain.Options{})
	o := ex.OOM
	if o == nil {
		t.Fatal("no OOM explained")
	}
	if o.Request != oom.Size || o.DeviceFree != oom.Addr || ex.CapacityFrom != "oom" || ex.Capacity != 300<<20 {
		t.Errorf("request %d free %d capacity %d (%s); want %d, %d, %d from the oom entry", o.Request, o.DeviceFree, ex.Capacity, ex.CapacityFrom, oom.Size, oom.Addr, 300<<20)
	}
	if o.Reserved+o.DeviceFree != ex.Capacity || o.Allocated > o.Reserved || o.ReservedFree != o.Reserved-o.Allocated {
		t.Errorf("allocated %d reserved %d free %d: inconsistent", o.Allocated, o.Reserved, o.ReservedFree)
	}
	var pooled, free uint64
	for _, p := range o.Pools {
		pooled += p.Reserved
		free += p.Free
		if p.LargestFree > p.Free {
			t.Errorf("pool %+v: a largest free block above its free bytes", p)
		}
	}
	if pooled != o.Reserved || free > o.ReservedFree {
		t.Errorf("pools hold %d reserved, %d free; want %d, at most %d", pooled, free, o.Reserved, o.ReservedFree)
	}
	if len(o.Sites) == 0 || !strings.HasSuffix(o.Sites[0].Site, "linear.py:125") {
		t.Errorf("sites %+v; want the kept outputs' first", o.Sites)
	}
	if rec := ex.WhatIf[0]; rec.Fits || !rec.Modelled || rec.RanOutAt >= 0 {
		t.Errorf("the recorded setting's replay %+v; want the request refused at the error, as recorded", rec)
	}
	for _, w := range ex.WhatIf {
		if w.Modelled && w.PeakReserved > ex.Capacity {
			t.Errorf("%s: peak reserved %d past the capacity %d", w.Setting, w.PeakReserved, ex.Capacity)
		}
	}
}

func TestParseSetting(t *testing.T) {
	for _, c := range []struct {
		in   string
		want explain.Setting
		bad  bool
	}{
		{"", explain.Setting{}, false},
		{"default", explain.Setting{}, false},
		{"max_split_size_mb:128", explain.Setting{Conf: "max_split_size_mb:128", MaxSplitSize: 128 << 20}, false},
		{"max_split_size_mb:64,expandable_segments:True", explain.Setting{Conf: "max_split_size_mb:64,expandable_segments:True", MaxSplitSize: 64 << 20, ExpandableSegments: true}, false},
		{"max_split_size_mb:19", explain.Setting{}, true},
		{"roundup_power2_divisions:3", explain.Setting{}, true},
		{"garbage_collection_threshold:1.5", explain.Setting{}, true},
		{"max_split_size_mb", explain.Setting{}, true},
		{"pinned:1", explain.Setting{}, true},
	} {
		got, err := explain.ParseSetting(c.in)
		if (err != nil) != c.bad || !c.bad && got != c.want {
			t.Errorf("ParseSetting(%q) = %+v, %v; want %+v (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

// TestUnmodelledRecordedSetting: a snapshot recorded under a setting
// impl/gpu cannot replay is explained by its request alone, and the
// validation says why it could not run.
func TestUnmodelledRecordedSetting(t *testing.T) {
	rec := explain.Setting{Conf: "roundup_power2_divisions:4", RoundupPower2Divisions: 4}
	ex := explainBytes(t, generated(t, snapgen.Config{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 300 << 20}), explain.Options{Recorded: &rec})
	if ex.Validation.Agrees || !strings.Contains(ex.Validation.Disagreement, "roundup_power2_divisions") {
		t.Errorf("validation %+v; want it not run, naming roundup_power2_divisions", ex.Validation)
	}
	if ex.OOM == nil || ex.OOM.Request == 0 || ex.OOM.Reserved != 0 {
		t.Errorf("OOM %+v; want the request alone", ex.OOM)
	}
	if len(ex.WhatIf) < 2 || ex.WhatIf[0].Modelled || !ex.WhatIf[1].Modelled {
		t.Errorf("what-ifs %+v; want the recorded one unmodelled, the others replayed", ex.WhatIf)
	}
}

// fragmenting is a loop of varied batch rows (Spread) whose cache
// fragments until a 508 MiB device runs out at its third step: a request
// that max_split_size_mb:32 would have served.
var fragmenting = snapgen.Config{Loop: snapgen.Train, Steps: 12, Layers: 2, Hidden: 2048, Vocab: 8192, Batch: 512,
	Seed: 1, Spread: 8, Capacity: 508 << 20}

// TestWhatIfFits: where a setting would have served the request, the
// explanation says so, and says the recorded one would not.
func TestWhatIfFits(t *testing.T) {
	ex := explainBytes(t, generated(t, fragmenting), explain.Options{})
	if !ex.Validation.Agrees || ex.OOM == nil {
		t.Fatalf("validation %+v, OOM %v", ex.Validation, ex.OOM)
	}
	fits := map[string]bool{}
	for _, w := range ex.WhatIf {
		fits[w.Setting.String()] = w.Fits && w.RanOutAt < 0
	}
	if fits["default"] || !fits["max_split_size_mb:32"] {
		t.Errorf("fits %v; want the default (recorded) refused and max_split_size_mb:32 served", fits)
	}
}

// TestExpandableWhatIf: expandable_segments:True is replayed (impl/gpu
// models it), among the default what-ifs of a snapshot recorded without
// it: a peak reserved, and whether the request fits.
func TestExpandableWhatIf(t *testing.T) {
	ex := explainBytes(t, generated(t, snapgen.Config{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 300 << 20}), explain.Options{})
	var exp *explain.Outcome
	for i := range ex.WhatIf {
		if ex.WhatIf[i].Setting.ExpandableSegments {
			exp = &ex.WhatIf[i]
		}
	}
	switch {
	case exp == nil:
		t.Fatalf("what-ifs %+v; want expandable_segments:True among them", ex.WhatIf)
	case !exp.Modelled || exp.PeakReserved == 0 || exp.PeakAllocated == 0 || exp.PeakReserved > ex.Capacity:
		t.Errorf("expandable_segments:True: %+v; want it replayed, its peak reserved within the capacity %d", exp, ex.Capacity)
	}
	var text strings.Builder
	if err := explain.WriteText(&text, ex); err != nil {
		t.Fatal(err)
	}
	if line := lineWith(text.String(), "expandable_segments:True"); line == "" || strings.Contains(line, "not modelled") || !strings.Contains(line, "MiB") {
		t.Errorf("the what-if table's expandable_segments line %q; want its peaks", line)
	}
}

// lineWith is the first line of text holding s, or "".
func lineWith(text, s string) string {
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}
