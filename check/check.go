package check

import (
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Source checks src, named file in the outcome, against the model under
// p, listing at most max violations (0: every one); the rest are counted
// by kind. Memory stays bounded however much the trace reports. An input
// error is the outcome's Err, as src gave it.
func Source(file string, src traces.Source, p *Policy, max int) Outcome {
	c := newCollector(file, p, max)
	rep, err := model.ReplayFunc(src, c.add)
	return c.finish(rep, err)
}

// File opens name as input.Open does with opts and checks it as Source
// does. A file that cannot be opened or read is an outcome whose Err
// names the file (input.Input.Explain); a snapshot's outcome says it was
// one (a snapshot is taken mid-run).
func File(name string, opts input.Options, p *Policy, max int) Outcome {
	in, err := input.Open(name, opts)
	if err != nil {
		return Outcome{File: name, Err: err}
	}
	defer in.Close()
	var o Outcome
	w := new(model.Watch)
	suspects := watchSuspects(w, in, p)
	if in.Format() == input.TorchSnapshot {
		o = deviceSource(name, in, w, p, max)
		o.Snapshot = true
	} else if w.Born != nil {
		c := newCollector(name, p, max)
		rep, err := model.ReplayWatched(in, w, c.add)
		o = c.finish(rep, err)
	} else {
		o = Source(name, in, p, max)
	}
	suspects(&o)
	if o.Err != nil {
		o.Err = in.Explain(o.Err)
	}
	return o
}

// deviceSource checks src as Source does, watched by w (a suspect
// detector, or nothing), and sums its device memory as allocated and
// reserved (Outcome.Device) from the model's lives. Only
// snapshots pay for the watch: a heap log of millions of blocks would.
func deviceSource(file string, src traces.Source, w *model.Watch, p *Policy, max int) Outcome {
	c := newCollector(file, p, max)
	d := new(model.DeviceBytes)
	born, died := w.Born, w.Died
	w.Born = func(t model.Thing) {
		d.Born(t)
		if born != nil {
			born(t)
		}
	}
	w.Died = func(t model.Thing, n int) {
		d.Died(t)
		if died != nil {
			died(t, n)
		}
	}
	rep, err := model.ReplayWatched(src, w, c.add)
	o := c.finish(rep, err)
	if o.Err == nil {
		o.Device = d
	}
	return o
}
