package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/traces"
)

// The baseline of tlcheck gate: what a team has accepted, per trace.
//
//	{
//	  "format": "tlcheck-baseline",
//	  "version": 1,
//	  "traces": [
//	    {
//	      "trace": "traces/train.jsonl",
//	      "complete": true,
//	      "leaked_bytes": 364,
//	      "peak_live_bytes": 464,
//	      "findings": [
//	        {"kind": "leak", "site": "", "alloc_site": "main.c:5", "count": 1}
//	      ]
//	    }
//	  ]
//	}
//
// Traces are sorted by name and findings by kind, site and alloc_site, and
// the file is indented, one finding a line, so that a change to it reads
// well in a diff. A finding is its fingerprint and how many times it
// occurs; nothing in it depends on event numbers, lines or addresses,
// which move with every unrelated edit of the program.

const (
	BaselineFormat  = "tlcheck-baseline"
	BaselineVersion = 1
)

// BaselineFinding is a fingerprint with its multiplicity.
type BaselineFinding struct {
	Fingerprint
	Count int `json:"count"`
}

// BaselineTrace is what the baseline accepts of one trace.
type BaselineTrace struct {
	Trace         string            `json:"trace"`
	Complete      bool              `json:"complete"`
	LeakedBytes   uint64            `json:"leaked_bytes"`
	PeakLiveBytes uint64            `json:"peak_live_bytes"`
	Findings      []BaselineFinding `json:"findings"`
}

// Baseline is the whole file.
type Baseline struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Traces  []BaselineTrace `json:"traces"`
}

// TraceKey is the name a trace goes by in the baseline: the path as given
// on the command line, cleaned and with forward slashes, so that one
// baseline serves every operating system CI runs on.
func TraceKey(name string) string {
	if name == "-" {
		return name
	}
	return filepath.ToSlash(filepath.Clean(name))
}

// ReadBaseline reads and checks a baseline file. Every error names the
// file.
func ReadBaseline(name string) (*Baseline, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := ParseBaseline(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// ParseBaseline reads a baseline from r strictly: an unknown field, an
// unknown kind, a trace or finding given twice, a count below 1 or
// another format or version is an error naming it.
func ParseBaseline(r io.Reader) (*Baseline, error) {
	data, err := io.ReadAll(r) // a baseline is small, and errors name lines in it
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt field would silently accept nothing
	var b Baseline
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("not a tlcheck baseline: %w", jsonError(err, data))
	}
	if dec.More() {
		return nil, errors.New("not a tlcheck baseline: more than one JSON value")
	}
	if b.Format != BaselineFormat {
		return nil, fmt.Errorf("format %q, want %q", safetext.Clip(b.Format), BaselineFormat)
	}
	if b.Version != BaselineVersion {
		return nil, fmt.Errorf("version %d: this tlcheck reads version %d", b.Version, BaselineVersion)
	}
	seen := make(map[string]bool)
	for i, t := range b.Traces {
		if t.Trace == "" {
			return nil, fmt.Errorf("traces[%d]: no trace name", i)
		}
		if seen[t.Trace] {
			return nil, fmt.Errorf("traces[%d]: trace %q appears twice", i, safetext.Clip(t.Trace))
		}
		seen[t.Trace] = true
		fps := make(map[Fingerprint]bool)
		for j, f := range t.Findings {
			switch {
			case !KnownKind(f.Kind) && f.Kind != LeakSuspect:
				return nil, fmt.Errorf("traces[%d].findings[%d]: unknown kind %q", i, j, safetext.Clip(string(f.Kind)))
			case f.Count < 1:
				return nil, fmt.Errorf("traces[%d].findings[%d]: count %d, want at least 1", i, j, f.Count)
			case fps[f.Fingerprint]:
				return nil, fmt.Errorf("traces[%d].findings[%d]: %s appears twice", i, j, f.Fingerprint)
			}
			fps[f.Fingerprint] = true
		}
	}
	return &b, nil
}

// Find returns the baseline's entry for a trace, or nil.
func (b *Baseline) Find(trace string) *BaselineTrace {
	for i := range b.Traces {
		if b.Traces[i].Trace == trace {
			return &b.Traces[i]
		}
	}
	return nil
}

// NewBaseline records what the run found: every unsuppressed finding of
// every trace (of every kind: --fail-on decides what fails, not what is
// accepted), with each trace's leaked and peak live bytes.
func NewBaseline(outs []Outcome) *Baseline {
	b := &Baseline{Format: BaselineFormat, Version: BaselineVersion, Traces: []BaselineTrace{}}
	for i := range outs {
		o := &outs[i]
		counts := make(map[Fingerprint]int)
		for j := range o.Report.Violations {
			if o.By[j] == nil {
				counts[FingerprintOf(&o.Report.Violations[j])]++
			}
		}
		t := BaselineTrace{
			Trace:         TraceKey(o.File),
			Complete:      o.Report.Complete,
			LeakedBytes:   o.Report.Leaked.Bytes,
			PeakLiveBytes: o.Report.PeakLiveBytes,
			Findings:      []BaselineFinding{},
		}
		for j := range o.Suspects {
			counts[SuspectFingerprint(&o.Suspects[j])]++
		}
		for f, n := range counts {
			t.Findings = append(t.Findings, BaselineFinding{f, n})
		}
		slices.SortFunc(t.Findings, func(x, y BaselineFinding) int { return x.Compare(y.Fingerprint) })
		b.Traces = append(b.Traces, t)
	}
	slices.SortFunc(b.Traces, func(x, y BaselineTrace) int { return strings.Compare(x.Trace, y.Trace) })
	return b
}

// Update is the baseline an update writes after a run over outs: each
// trace the run checked as NewBaseline records it and every other trace of
// b as b has it, unless prune, which drops those. A baseline is shared by
// the jobs that gate its traces: an update of one job's traces must not
// silently drop what another's accepted. Update returns b's traces the run
// did not check (kept or dropped), sorted by name, for the caller to name.
func (b *Baseline) Update(outs []Outcome, prune bool) (nb *Baseline, notRun []BaselineTrace) {
	nb = NewBaseline(outs)
	ran := make(map[string]bool, len(nb.Traces))
	searched := make(map[string]bool, len(outs))
	for i := range outs {
		searched[TraceKey(outs[i].File)] = outs[i].SuspectsSearched
	}
	for i := range nb.Traces {
		t := &nb.Traces[i]
		ran[t.Trace] = true
		// A run that did not search for suspects keeps those accepted.
		if old := b.Find(t.Trace); old != nil && !searched[t.Trace] {
			for _, f := range old.Findings {
				if f.Kind == LeakSuspect {
					t.Findings = append(t.Findings, f)
				}
			}
			slices.SortFunc(t.Findings, func(x, y BaselineFinding) int { return x.Compare(y.Fingerprint) })
		}
	}
	for _, t := range b.Traces {
		if !ran[t.Trace] {
			notRun = append(notRun, t)
		}
	}
	slices.SortFunc(notRun, func(x, y BaselineTrace) int { return strings.Compare(x.Trace, y.Trace) })
	if !prune {
		nb.Traces = append(nb.Traces, notRun...)
		slices.SortFunc(nb.Traces, func(x, y BaselineTrace) int { return strings.Compare(x.Trace, y.Trace) })
	}
	return nb, notRun
}

// Accepted is how many findings the trace's entry accepts, counted with
// their multiplicity.
func (t *BaselineTrace) Accepted() int {
	n := 0
	for _, f := range t.Findings {
		n += f.Count
	}
	return n
}

// Marshal is the file's text: indented, one finding a line, sorted, with
// a final newline.
func (b *Baseline) Marshal() []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "{\n  \"format\": %s,\n  \"version\": %d,\n  \"traces\": [", quote(b.Format), b.Version)
	for i, t := range b.Traces {
		if i > 0 {
			buf.WriteString(",")
		}
		fmt.Fprintf(&buf, "\n    {\n      \"trace\": %s,\n      \"complete\": %t,\n      \"leaked_bytes\": %d,\n      \"peak_live_bytes\": %d,\n      \"findings\": [",
			quote(t.Trace), t.Complete, t.LeakedBytes, t.PeakLiveBytes)
		for j, f := range t.Findings {
			if j > 0 {
				buf.WriteString(",")
			}
			fmt.Fprintf(&buf, "\n        {\"kind\": %s, \"site\": %s, \"alloc_site\": %s, \"count\": %d}",
				quote(string(f.Kind)), quote(f.Site), quote(f.AllocSite), f.Count)
		}
		if len(t.Findings) > 0 {
			buf.WriteString("\n      ")
		}
		buf.WriteString("]\n    }")
	}
	if len(b.Traces) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("]\n}\n")
	return buf.Bytes()
}

// quote is s as a JSON string, without HTML escaping (sites hold < and >),
// every control character escaped (safetext.JSON).
func quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(string(safetext.JSON(buf.Bytes())), "\n")
}

// Compare marks o's findings against the baseline's entry for its trace:
// each fingerprint the baseline accepts n times covers the first n
// findings with it, in event order; the rest are new, and what the
// baseline has beyond this run's count is fixed.
func (o *Outcome) Compare(bt *BaselineTrace, tol Tolerance) {
	o.Gated = true
	o.Known = make([]bool, len(o.Report.Violations))
	if o.Err != nil {
		return
	}
	left := make(map[Fingerprint]int)
	if bt != nil {
		o.InBaseline = true
		for _, f := range bt.Findings {
			left[f.Fingerprint] = f.Count
		}
	}
	for i := range o.Report.Violations {
		if o.By[i] != nil {
			continue // suppressed: neither new nor known
		}
		f := FingerprintOf(&o.Report.Violations[i])
		if left[f] > 0 {
			left[f]--
			o.Known[i] = true
		}
	}
	o.SuspectKnown = make([]bool, len(o.Suspects))
	for i := range o.Suspects {
		f := SuspectFingerprint(&o.Suspects[i])
		if left[f] > 0 {
			left[f]--
			o.SuspectKnown[i] = true
		}
	}
	if bt == nil {
		return
	}
	for _, f := range bt.Findings { // in the baseline's order, which is sorted
		if f.Kind == traces.Leak && !o.Report.Complete {
			continue // no leak check ran: its leaks are unknown, not fixed
		}
		if f.Kind == LeakSuspect && !o.SuspectsSearched {
			continue // no search ran: its suspects are unknown, not fixed
		}
		if n := left[f.Fingerprint]; n > 0 {
			o.Fixed = append(o.Fixed, BaselineFinding{f.Fingerprint, n})
		}
	}
	o.Growth = []Growth{
		{Name: "leaked bytes", Was: bt.LeakedBytes, Now: o.Report.Leaked.Bytes, Allowed: tol.Allowed(bt.LeakedBytes)},
		{Name: "peak live bytes", Was: bt.PeakLiveBytes, Now: o.Report.PeakLiveBytes, Allowed: tol.Allowed(bt.PeakLiveBytes)},
	}
}

// EmptyBaseline is a baseline that accepts nothing: where --update starts.
func EmptyBaseline() *Baseline {
	return &Baseline{Format: BaselineFormat, Version: BaselineVersion, Traces: []BaselineTrace{}}
}
