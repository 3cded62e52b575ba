package main

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// The HTML page of a snapshot with an oom entry explains its last
// out-of-memory error. Explain replays through impl/gpu and the page is
// export's, over the model: only a command may join the two (the walls),
// so the translation lives here. The page's leak suspects are
// check.PageWatch's.

// pageOOM explains a snapshot's last out-of-memory error for the page
// (explain reads the snapshot itself); nil where it has no oom entry.
func pageOOM(src *input.Reread) (*export.PageOOM, error) {
	f, err := src.Raw()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := torchsnap.NewReaderLimits(f, torchsnap.Limits{Stacks: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name(), err)
	}
	if len(r.OOMs()) == 0 {
		return nil, nil
	}
	ex, err := explain.Explain(r, explain.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: explaining the out-of-memory error: %w", src.Name(), err)
	}
	return oomPage(ex), nil
}

// oomPage is ex as the page shows it: the what-ifs replayed (those
// impl/gpu does not model named in the note), the note saying where
// the figures are the model's rather than the run's.
func oomPage(ex *explain.Explanation) *export.PageOOM {
	if ex.OOM == nil {
		return nil
	}
	o := ex.OOM
	p := &export.PageOOM{Event: o.Event, Request: o.Request, Capacity: ex.Capacity, Allocated: o.Allocated, Reserved: o.Reserved}
	for _, pl := range o.Pools {
		p.Pools = append(p.Pools, export.PageOOMPool{Pool: fmt.Sprintf("%s, stream %d", pl.Pool, pl.Stream), FreeBytes: pl.Free, LargestFree: pl.LargestFree})
	}
	for _, s := range o.Sites {
		p.Sites = append(p.Sites, export.PageSiteBytes{Site: s.Site, Bytes: s.Bytes})
	}
	var notes, unmodelled []string
	for _, w := range ex.WhatIf {
		if !w.Modelled {
			unmodelled = append(unmodelled, w.Setting.String())
			continue
		}
		p.WhatIf = append(p.WhatIf, export.PageWhatIf{Setting: w.Setting.String(), PeakReserved: w.PeakReserved, Fits: w.Fits})
	}
	notes = append(notes, fmt.Sprintf("recorded under %s (%s)", ex.Recorded, ex.RecordedFrom))
	if !ex.Validation.Agrees {
		notes = append(notes, "the figures are impl/gpu's replay, not the run's: "+ex.Validation.Disagreement)
	}
	if unmodelled != nil {
		notes = append(notes, "not replayed (not modelled by impl/gpu): "+strings.Join(unmodelled, "; "))
	}
	p.Note = strings.Join(notes, "; ")
	return p
}
