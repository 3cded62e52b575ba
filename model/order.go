package model

import (
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// orderer puts Replay's violations in event order as they come, keeping
// only the few that may still move. Violations mostly come in event order;
// the exception is a missed free (effects), which Step finds at the first
// call after the call that made the free due and names after that call,
// after the frees in between have had their say. So a violation can be
// overtaken only by one found at a later call and named no later than the
// call before it:
//
//   - after each call, everything held is final (nothing still to come
//     names an earlier event), and goes out in order;
//   - a violation a call reports at its own event is final at once (the
//     missed frees it found came first), so a call that reports millions,
//     as end does for a leaky trace, holds none of them.
//
// What waits is the violations of the frees since the last call.
type orderer struct {
	f       func(traces.Violation, uint64)
	cur     int  // the event being stepped
	call    bool // it is not a free
	pending []heldViolation
}

type heldViolation struct {
	v    traces.Violation
	size uint64
}

func (o *orderer) add(v traces.Violation, size uint64) {
	if o.call && v.Event == o.cur {
		o.flush()
		o.f(v, size)
		return
	}
	o.pending = append(o.pending, heldViolation{v, size})
}

// flush hands on everything held, in event order (a stable sort: the
// violations of one event keep the order they were found in).
func (o *orderer) flush() {
	slices.SortStableFunc(o.pending, func(a, b heldViolation) int { return a.v.Event - b.v.Event })
	for i := range o.pending {
		o.f(o.pending[i].v, o.pending[i].size)
	}
	clear(o.pending)
	o.pending = o.pending[:0]
}
