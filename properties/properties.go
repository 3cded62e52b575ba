package properties

import (
	"fmt"

	"github.com/tlcheck/tlcheck/traces"
)

// Property is a property as code: a named check over a run's Result that
// returns nil or a *Breach describing the first place the run broke it.
// Check returns the concrete pointer, not an error: a nil *Breach stored
// in an error would not compare equal to nil.
type Property struct {
	Name  string
	Doc   string
	Check func(*Result) *Breach
}

// Breach is where a run broke a property.
type Breach struct {
	Property string
	Call     int // Result.Calls index
	Event    int // the trace event that shows it; -1 if none
	Message  string

	// sig tells failures apart for shrinking: what broke (a violation kind
	// or a mismatch kind) at which op. Shrink keeps candidates that fail
	// with the same sig, so that a counterexample shrinks to a smaller one
	// of the same bug rather than to another bug.
	sig string
}

func (b *Breach) Error() string { return b.Property + ": " + b.Message }

// Properties lists the properties, violations first and Refines last: when
// two break at the same call, the earlier in this list names the failure,
// because a violation says more than a state difference.
func Properties() []Property {
	return []Property{
		{"NoDoubleFree", "the runtime never frees or releases an object already dead", NoDoubleFree},
		{"NoUseAfterFree", "the runtime never acts on an object already dead", NoUseAfterFree},
		{"NoPrematureFree", "the runtime never frees an object that still has references", NoPrematureFree},
		{"NoStaleReuse", "no action meant for an address's earlier object hits its new one", NoStaleReuse},
		{"NoLeak", "every object whose count reaches 0 is freed, before the next call", NoLeak},
		{"Refines", "after every call the runtime's state, answer and record are the model's", Refines},
	}
}

// NoDoubleFree: no double-free that the runtime did not refuse.
func NoDoubleFree(r *Result) *Breach { return firstVerdict(r, "NoDoubleFree", traces.DoubleFree) }

// NoUseAfterFree: no use-after-free that the runtime did not refuse.
func NoUseAfterFree(r *Result) *Breach { return firstVerdict(r, "NoUseAfterFree", traces.UseAfterFree) }

// NoPrematureFree: no free of an object that still has references.
func NoPrematureFree(r *Result) *Breach {
	return firstVerdict(r, "NoPrematureFree", traces.PrematureFree)
}

// NoStaleReuse: no free or release of an object through a stale record of
// an earlier object at the same address.
func NoStaleReuse(r *Result) *Breach { return firstVerdict(r, "NoStaleReuse", traces.StaleReuse) }

// NoLeak: no leak other than the program's own at end (an object it kept
// alive): an object whose count reached 0 is freed before the next call.
func NoLeak(r *Result) *Breach { return firstVerdict(r, "NoLeak", traces.Leak) }

// Refines: the runtime refines the model. After every call the runtime's
// state equals the model's; it refuses exactly the calls the model finds
// misuse in, with the model's kind; it records the call it was asked to
// make, then only frees; it never panics; its heap never overlaps two live
// objects; the counts its trace states are the model's (count-mismatch);
// and, where the run failed, its trace, written and read back, replays to
// the same verdicts.
func Refines(r *Result) *Breach {
	var first *Breach
	if len(r.Mismatches) > 0 {
		m := r.Mismatches[0]
		first = &Breach{Property: "Refines", Call: m.Call, Event: r.Calls[m.Call].Event, Message: m.What,
			sig: string(m.Kind) + "@" + r.Calls[m.Call].Step.Op.String()}
	}
	for _, k := range []traces.Kind{traces.Misuse, traces.InvalidAddress, traces.Overlap, traces.CountMismatch} {
		if b := firstVerdict(r, "Refines", k); b != nil && (first == nil || b.Call < first.Call) {
			first = b
		}
	}
	return first
}

// firstVerdict returns the first violation of kind k that the program does
// not explain, as a Breach of property name.
func firstVerdict(r *Result, name string, k traces.Kind) *Breach {
	for _, v := range r.Verdicts {
		if v.Kind == k && !v.Explained {
			return &Breach{Property: name, Call: v.Call, Event: v.Event, Message: verdictMessage(r, v),
				sig: string(v.Kind) + "@" + opAt(r, v.Event)}
		}
	}
	return nil
}

// opAt names the op of trace event i, "" if there is none.
func opAt(r *Result, i int) string {
	if i < 0 || i >= len(r.Trace) {
		return ""
	}
	return r.Trace[i].Op.String()
}

func verdictMessage(r *Result, v Verdict) string {
	if v.Event < 0 || v.Event >= len(r.Trace) {
		return fmt.Sprintf("%s: %s", v.Kind, v.Message)
	}
	msg := fmt.Sprintf("%s at event %d (%s): %s", v.Kind, v.Event, r.Trace[v.Event].String(), v.Message)
	if c := r.Calls[v.Call]; c.Event == v.Event && c.Err == nil {
		msg += "; the runtime accepted the call"
	}
	return msg
}

// check runs every property over r and returns the breach at the earliest
// call, ties going to the property listed first, and the names of every
// property r broke.
func check(r *Result) (first *Breach, broken []string) {
	for _, p := range Properties() {
		b := p.Check(r)
		if b == nil {
			continue
		}
		broken = append(broken, p.Name)
		if first == nil || b.Call < first.Call {
			first = b
		}
	}
	return first, broken
}
