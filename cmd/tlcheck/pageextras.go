package main

import (
	"bytes"
	"fmt"
	"github.com/tlcheck/tlcheck/check"
	"io"
	"os"
	"strings"

	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// The HTML page of a trace without an end (a snapshot taken mid-run)
// shows its leak suspects, and that of a snapshot with an oom entry the
// explanation of its last out-of-memory error.

// pageAnalyses returns what an HTML export of in passes to the page:
// the extras, and a watch that finds the leak suspects in the export's
// own replay and fills them in where the trace has no end. A snapshot
// with an oom entry is explained first, read again from src (explain
// replays it through impl/gpu, once for each setting). Its error is
// the input's.
func pageAnalyses(in *input.Input, src *rereader) (*export.PageExtras, *model.Watch, error) {
	extras := &export.PageExtras{}
	if len(in.OOMs()) > 0 {
		var err error
		if extras.OOM, err = pageOOM(src); err != nil {
			return nil, nil, err
		}
	}
	d := suspect.New(check.SuspectOptions(in, suspect.Options{}))
	ended := false
	w := &model.Watch{
		Event: func(ev *traces.Event, pos traces.Pos) {
			ended = ended || ev.Op == traces.OpEnd
			d.Event(ev, pos)
		},
		Born: d.Born,
		Died: d.Died,
		Closed: func([]model.Thing) {
			if ended {
				return // the model checked its leaks
			}
			if res, err := d.Result(); err == nil { // an error only for a named marker
				extras.Suspects = res.Page()
			}
		},
	}
	return extras, w, nil
}

// pageOOM explains a snapshot's last out-of-memory error for the page
// (explain reads the snapshot itself); nil where it has no oom entry.
func pageOOM(src *rereader) (*export.PageOOM, error) {
	f, err := src.raw()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := torchsnap.NewReaderLimits(f, torchsnap.Limits{Stacks: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.name(), err)
	}
	if len(r.OOMs()) == 0 {
		return nil, nil
	}
	ex, err := explain.Explain(r, explain.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: explaining the out-of-memory error: %w", src.name(), err)
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

// rereader reads a file again for an analysis of its own: standard
// input ("-") is read whole once, and again from memory.
type rereader struct {
	file string
	data []byte // standard input's bytes
}

func newRereader(file string, stdin io.Reader) (*rereader, error) {
	r := &rereader{file: file}
	if file == "-" && stdin != nil {
		var err error
		if r.data, err = io.ReadAll(stdin); err != nil {
			return nil, fmt.Errorf("<stdin>: %w", err)
		}
	}
	return r, nil
}

// raw opens the file's bytes.
func (r *rereader) raw() (io.ReadCloser, error) {
	if r.file == "-" {
		return io.NopCloser(bytes.NewReader(r.data)), nil
	}
	return os.Open(r.file)
}

// name is the file's name in messages.
func (r *rereader) name() string {
	if r.file == "-" {
		return "<stdin>"
	}
	return r.file
}
