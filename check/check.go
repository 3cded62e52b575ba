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
	o := Source(name, in, p, max)
	if o.Err != nil {
		o.Err = in.Explain(o.Err)
	}
	o.Snapshot = in.Format() == input.TorchSnapshot
	return o
}
