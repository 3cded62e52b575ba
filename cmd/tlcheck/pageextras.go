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
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// The HTML page of a trace without an end (a snapshot taken mid-run)
// shows its leak suspects, and that of a snapshot with an oom entry the
// explanation of its last out-of-memory error: analyses of their own,
// each a replay of the input before the export's.

// pageExtras reads file (opened by open, once per analysis) for the
// page's extras: the leak suspects where the trace has no end, and the
// OOM explanation where it is a snapshot with an oom entry. Nil where
// there is nothing to show; its error is the input's.
func pageExtras(src *rereader, from string) (*export.PageExtras, error) {
	in, err := src.input(input.Options{Format: input.Format(from), Stacks: true})
	if err != nil {
		return nil, err
	}
	ew := &endWatch{Source: in}
	res, err := suspect.Find(ew, check.SuspectOptions(in, suspect.Options{}))
	if err != nil {
		in.Close()
		return nil, in.Explain(err)
	}
	snapshot := in.Format() == input.TorchSnapshot
	in.Close()
	extras := &export.PageExtras{}
	if !ew.ended {
		extras.Suspects = res.Page()
	}
	if snapshot {
		if extras.OOM, err = pageOOM(src); err != nil {
			return nil, err
		}
	}
	if extras.Suspects == nil && extras.OOM == nil {
		return nil, nil
	}
	return extras, nil
}

// endWatch is a source that notes whether it held an end.
type endWatch struct {
	traces.Source
	ended bool
}

func (w *endWatch) Next(ev *traces.Event) error {
	err := w.Source.Next(ev)
	if err == nil && ev.Op == traces.OpEnd {
		w.ended = true
	}
	return err
}

// pageOOM explains a snapshot's last out-of-memory error for the page;
// nil where it has no oom entry.
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

// rereader reads a file again for each analysis: standard input
// ("-") is read whole once and again from memory.
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

// input opens the file as an Input.
func (r *rereader) input(o input.Options) (*input.Input, error) {
	if r.file == "-" {
		o.Stdin = bytes.NewReader(r.data)
	}
	return input.Open(r.file, o)
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
