package drive

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// The trace written beside a counterexample carries the driver's answers,
// so that `tlcheck replay` of it agrees with the run (PROTOCOL.md,
// "Counterexamples and replay"): each event's site names the call that
// recorded it ("call 4"), and a refused call's event says so ("call 4,
// refused"); a site the runtime gave stays, after " at ". The violations
// the run found explained by the program (a misuse the runtime refused, a
// leak of what the program kept) are written as suppressions beside it,
// which match those sites, so that replay with them reports what the run
// reported and nothing more.

// sited returns trace event i with its call's site.
func (r *Result) sited(i int) *traces.Event {
	ev := r.Trace[i]
	ev.Site = r.siteOf(i)
	return &ev
}

// siteOf is the site the written trace gives event i.
func (r *Result) siteOf(i int) string {
	call := -1
	for k, o := range r.Outcomes { // the call whose answer holds event i
		if o.Event >= 0 && i >= o.Event && i < o.Event+o.Events {
			call = k
			break
		}
	}
	own := r.Trace[i].Site
	if call < 0 {
		return own
	}
	site := fmt.Sprintf("call %d", call)
	if o := r.Outcomes[call]; o.Refused && o.Event == i {
		site += ", refused"
	}
	if own != "" {
		site += " at " + own
	}
	return site
}

// Suppressions returns the suppressions (`tlcheck replay --suppressions`,
// KIND:PATTERN lines) that accept the violations the run found explained
// by the program: each at the site of the refused call that explains it,
// or for a leak of what the program kept, at the site of its allocation.
// "" if there were none.
func (r *Result) Suppressions() string {
	if len(r.explained) == 0 || r.TensorCalls != nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("# tlcheck-drive: the violations this run found explained by the program, not the runtime\n")
	seen := map[string]bool{}
	for _, v := range r.explained {
		at := v.Event
		why := "the runtime refused the call"
		if v.Kind == traces.Leak && len(v.Related) > 0 {
			at, why = v.Related[0].Event, "the program kept the object"
		}
		if at < 0 || at >= len(r.Trace) {
			continue
		}
		line := fmt.Sprintf("%s:%s", v.Kind, r.siteOf(at))
		if !seen[line] {
			seen[line] = true
			fmt.Fprintf(&b, "%s\n# (%s)\n", line, why)
		}
	}
	return b.String()
}

// zeroSizedAnswer is the call's own event a zero-sized alloc or
// struct_init answers with: at NULL, its fields as asked.
func zeroSizedAnswer(call *Call) string {
	ev := traces.Event{Op: call.Op, Size: 0}
	if call.Op == traces.OpStructInit {
		ev.Fields = make([]traces.Addr, len(call.Fields))
	}
	return fmt.Sprintf(`{"op":%q,"addr":"0x0","size":0%s}`, call.Op.String(), fieldsJSON(ev.Fields, call.Op))
}

func fieldsJSON(fs []traces.Addr, op traces.Op) string {
	if op != traces.OpStructInit {
		return ""
	}
	return `,"fields":[` + strings.TrimSuffix(strings.Repeat(`"0x0",`, len(fs)), ",") + "]"
}

// modelSays describes what the model holds that a call names, before it
// takes the call's event ev: for a refusal the model finds nothing wrong
// with, the state in which the call was correct.
func (c *checker) modelSays(call *Call, ev *traces.Event) string {
	var st traces.State
	c.chk.StateInto(&st)
	var parts []string
	if call.Name != "" {
		if a, ok := st.Params[call.Name]; ok {
			parts = append(parts, fmt.Sprintf("param %q holds %v (count %d)", call.Name, a, st.Objects[a]))
		} else {
			parts = append(parts, fmt.Sprintf("param %q holds nothing", call.Name))
		}
	}
	addrs := []traces.Addr{}
	if f := callRows[call.Op].fields; f&cTarget != 0 {
		addrs = append(addrs, ev.Addr)
	}
	addrs = append(addrs, ev.Fields...)
	for _, a := range addrs {
		if a == 0 {
			continue
		}
		if n, ok := st.Objects[a]; ok {
			records := 0
			for _, s := range st.Scopes {
				for _, r := range s {
					if r == a {
						records++
					}
				}
			}
			parts = append(parts, fmt.Sprintf("%v is alive with count %d and %d scope record(s)", a, n, records))
		} else {
			parts = append(parts, fmt.Sprintf("%v holds no object", a))
		}
	}
	parts = append(parts, fmt.Sprintf("%d scope(s) open", len(st.Scopes)))
	return "in the model " + strings.Join(parts, ", ")
}
