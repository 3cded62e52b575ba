package check

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/traces"
)

// Policy decides which findings fail a run.
type Policy struct {
	FailOn     KindSet // empty: every kind fails
	RequireEnd bool    // a trace without end fails
	Rules      []*Rule // suppressions, in order
	// ListSuspects searches a snapshot for leak suspects and lists them
	// (Outcome.Suspects); they fail the run only where FailOn names
	// LeakSuspect, which searches any trace without an end.
	ListSuspects bool

	index atomic.Pointer[ruleIndex] // Rules indexed, built on first use
}

// Fails reports whether a finding of kind k fails the run.
func (p *Policy) Fails(k traces.Kind) bool {
	return len(p.FailOn) == 0 || p.FailOn[k]
}

// KindSet is the value of --fail-on: a comma list of violation kinds.
// The flag may be repeated; the kinds add up.
type KindSet map[traces.Kind]bool

func (s *KindSet) String() string {
	if s == nil || len(*s) == 0 {
		return ""
	}
	var names []string
	for _, k := range append(traces.Kinds(), LeakSuspect) {
		if (*s)[k] {
			names = append(names, string(k))
		}
	}
	return strings.Join(names, ",")
}

// Set adds a comma list of kinds; it is a flag.Value.
func (s *KindSet) Set(v string) error {
	if *s == nil {
		*s = make(KindSet)
	}
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !KnownKind(traces.Kind(name)) && traces.Kind(name) != LeakSuspect {
			return fmt.Errorf("unknown kind %q (want a comma list of %s)", safetext.Clip(name), kindList())
		}
		(*s)[traces.Kind(name)] = true
	}
	if len(*s) == 0 {
		return errors.New("no kind named (want a comma list of " + kindList() + ")")
	}
	return nil
}

// KnownKind reports whether k is one of the contract's kinds.
func KnownKind(k traces.Kind) bool {
	for _, c := range traces.Kinds() {
		if c == k {
			return true
		}
	}
	return false
}

// kindList names every kind, and leak-suspect, for messages.
func kindList() string {
	var names []string
	for _, k := range traces.Kinds() {
		names = append(names, string(k))
	}
	names = append(names, string(LeakSuspect))
	return strings.Join(names, ", ")
}
