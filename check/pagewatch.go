package check

import (
	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// PageWatch returns a Watch for the replay of an HTML export of in
// (export.Options.Watch) that finds its leak suspects in that same
// replay and, once the replay is closed, puts them in extras.Suspects;
// a trace that ends gets none, as the model checked its leaks.
func PageWatch(in *input.Input, extras *export.PageExtras) *model.Watch {
	d := suspect.New(SuspectOptions(in, suspect.Options{}))
	ended := false
	return &model.Watch{
		Event: func(ev *traces.Event, pos traces.Pos) {
			ended = ended || ev.Op == traces.OpEnd
			d.Event(ev, pos)
		},
		Born: d.Born,
		Died: d.Died,
		Closed: func([]model.Thing) {
			if ended {
				return
			}
			if res, err := d.Result(); err == nil { // an error only for a named marker
				extras.Suspects = res.Page()
			}
		},
	}
}
