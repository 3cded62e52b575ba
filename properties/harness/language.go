package harness

import (
	"io"
	"math/rand/v2"
	"strings"
)

// Language is a program language: what its programs are made of and how
// to generate, run, shrink, measure and list them. Name the fields when
// building one (the struct grows); the functions marked optional may be
// nil.
type Language[P any] struct {
	Name string // the engine of impl's catalog that hunts with it: "program", "source", ...
	Unit string // a counterexample's size: "events", "statements", "calls", "steps"
	Noun string // one program in a report: "program", "source program"
	Step string // one step of a listing: "step", "statement", "call"

	// Rand returns the stream the programs of seed are drawn from: each
	// language keeps its own, so that a seed finds the same programs as
	// it always did.
	Rand func(seed uint64) *rand.Rand
	// Generate draws the program that follows n others from r.
	Generate func(r *rand.Rand, n int) P
	// Run runs p with the language's oracles: nil if every property
	// holds. The runtime's faults are the ones bound into the value.
	Run func(p P) *Failure
	// Grace, for a language whose failures may be Hidden: how many more
	// programs Search runs after a hidden failure for one that shows.
	Grace int

	// Shrink returns a smaller program that fails as p did, with its
	// failure (nil: none found). Optional: without it the shrinker driver
	// tries Candidates.
	Shrink func(p P, f *Failure) (P, *Failure)
	// Candidates returns smaller programs than p, the most promising
	// first. Optional: used when Shrink is nil.
	Candidates func(p P) []P

	// Len is p's length in Step.
	Len func(p P) int
	// List writes p as text: its listing, one step a line.
	List func(p P) string
	// Parse reads a listing back. Optional: a language without it
	// cannot be checked again from a saved file (Recheck).
	Parse func(text string) (P, error)
	// Counterexample is what a failure of p leaves: the text to keep
	// (its trace for a language measured in events, else p's listing)
	// and its size in Unit.
	Counterexample func(p P, f *Failure) (text string, size int)

	// What a fuzz report says (see Fuzz): the code the programs run
	// against ("the runtime"), the label of a counterexample's file name
	// when no fault is on ("runtime"), and, for a language whose shrunk
	// program is saved beside its trace, the program's extension
	// (".tl"), its heading comment, and the command that checks it
	// again.
	Against string
	Label   string
	Ext     string
	Head    func(seed uint64, fault, property string) string
	Again   func(path, fault string) []string

	_ struct{}
}

// Failure is a program that broke a property, in every language.
type Failure struct {
	Property string   // the property that broke first
	Also     []string // the others the run broke, in the language's order
	Kind     string   // the kind of violation behind Property, where it says more; "" if none
	Message  string   // what broke, where and how
	Call     int      // the step or call at which it broke
	Events   int      // the length of the failing run's trace
	// Notes is printed verbatim after the message in a fuzz report
	// (lines the language adds, such as what its trace shows).
	Notes string
	// Hidden: the failure does not show in the trace alone (see
	// Language.Grace).
	Hidden bool
	// Trace writes the failing run's trace (JSON Lines, the file
	// `tlcheck replay` reads); nil if the run left none.
	Trace func(w io.Writer) error
	// Detail is the language's own failure, for callers that want more
	// than the fields above (errors.As reaches it).
	Detail error
}

func (f *Failure) Error() string { return f.Property + ": " + f.Message }

// Unwrap returns Detail.
func (f *Failure) Unwrap() error { return f.Detail }

// Broke names the properties f broke, the first one first: "P", or
// "P, Q, R".
func (f *Failure) Broke() string {
	return strings.Join(append([]string{f.Property}, f.Also...), ", ")
}

// Missing names the fields l must have and lacks: every one but Grace,
// Candidates and Parse, and Shrink or Candidates, one of the two; Ext with
// Head and Again. A language that lacks none has nothing to name.
func (l Language[P]) Missing() []string {
	var out []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"Name", l.Name != ""}, {"Unit", l.Unit != ""}, {"Noun", l.Noun != ""}, {"Step", l.Step != ""},
		{"Rand", l.Rand != nil}, {"Generate", l.Generate != nil}, {"Run", l.Run != nil},
		{"Shrink or Candidates", l.Shrink != nil || l.Candidates != nil},
		{"Len", l.Len != nil}, {"List", l.List != nil}, {"Counterexample", l.Counterexample != nil},
		{"Against", l.Against != ""}, {"Label", l.Label != ""},
		{"Head and Again (it has an Ext)", l.Ext == "" || l.Head != nil && l.Again != nil},
	} {
		if !f.ok {
			out = append(out, f.name)
		}
	}
	return out
}
