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
	if in.Format() == input.TorchSnapshot {
		o = deviceSource(name, in, p, max)
		o.Snapshot = true
	} else {
		o = Source(name, in, p, max)
	}
	if o.Err != nil {
		o.Err = in.Explain(o.Err)
	}
	return o
}

// deviceSource checks src as Source does, and sums its device memory as
// allocated and reserved (Outcome.Device) from the model's lives. Only
// snapshots pay for the watch: a heap log of millions of blocks would.
func deviceSource(file string, src traces.Source, p *Policy, max int) Outcome {
	c := newCollector(file, p, max)
	d := new(model.DeviceBytes)
	w := &model.Watch{Born: d.Born, Died: func(t model.Thing, _ int) { d.Died(t) }}
	rep, err := model.ReplayWatched(src, w, c.add)
	o := c.finish(rep, err)
	if o.Err == nil {
		o.Device = d
	}
	return o
}
