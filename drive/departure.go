package drive

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Departure is a known difference a driver declares in its hello
// ("departures"): where its runtime knowingly answers otherwise than what
// it stands for (the Go engine's matmul takes matrices only; PyTorch 1.13
// names another operand than the current release). It is data, so that
// the differential (Diff) sets aside a disagreement it explains, counted
// and named, in tlcheck fuzz --against as in a Go test, and nothing it
// does not explain: a disagreement is the departure's when it is at a
// call of Op, on Field, and the declaring driver's answer (and the other
// driver's) says what Message (Other) says, after a call of one of
// After. PROTOCOL.md, "Declared departures", is the contract.
type Departure struct {
	Name    string   `json:"name"`              // short and unique among the driver's: "matmul-matrices-only"
	Field   string   `json:"field,omitempty"`   // the answers' field that differs: "outcome", "message", "tensor.grad_fn", "grads" (a prefix of the field's path); empty: any
	Op      string   `json:"op,omitempty"`      // the call it shows at; empty: any
	Message string   `json:"message,omitempty"` // a part of the declaring driver's answer: its message, or its text as the protocol writes it (a grad_fn); empty: any answer
	Other   string   `json:"other,omitempty"`   // a part of the other driver's answer, likewise
	After   []string `json:"after,omitempty"`   // calls one of which comes before it in the program; empty: any program
	Note    string   `json:"note,omitempty"`    // free text: what differs, and why
}

// departureFields are the answers' fields a departure may name, the roots
// of Difference.Field.
var departureFields = []string{"outcome", "message", "tensor", "grads"}

// check says what is wrong with a departure as a hello declares it.
func (dep *Departure) check() error {
	if dep.Name == "" {
		return errors.New(`a departure needs a "name"`)
	}
	if dep.Field == "" && dep.Op == "" && dep.Message == "" && dep.Other == "" {
		return fmt.Errorf("departure %q explains every disagreement: give its field, op, message or other", dep.Name)
	}
	root, _, _ := strings.Cut(dep.Field, ".")
	root, _, _ = strings.Cut(root, "[")
	if dep.Field != "" && !slices.Contains(departureFields, root) {
		return fmt.Errorf("departure %q: \"field\" %q is not a field of an answer (%s, or a path under one: tensor.grad_fn)", dep.Name, dep.Field, strings.Join(departureFields, ", "))
	}
	for _, op := range append([]string{dep.Op}, dep.After...) {
		if op != "" && !TensorOp(op).IsCall() {
			return fmt.Errorf("departure %q: %q is not a layer-5 call", dep.Name, op)
		}
	}
	return nil
}

// checkDepartures checks a hello's departures: each well formed, the
// names unique.
func checkDepartures(deps []Departure) error {
	seen := map[string]bool{}
	for i := range deps {
		if err := deps[i].check(); err != nil {
			return fmt.Errorf(`"departures"[%d]: %w`, i, err)
		}
		if seen[deps[i].Name] {
			return fmt.Errorf(`"departures"[%d]: the name %q is declared twice`, i, deps[i].Name)
		}
		seen[deps[i].Name] = true
	}
	return nil
}

// explains reports whether the departure, declared by the driver whose
// answer is own, explains the disagreement d (other is the other
// driver's answer). A driver that broke, or a run the model finds wrong,
// is never a departure.
func (dep *Departure) explains(d *Disagreement, own, other *Outcome) bool {
	if strings.HasPrefix(d.Field, "driver ") || strings.HasPrefix(d.Field, "model ") {
		return false
	}
	if dep.Field != "" && d.Field != dep.Field && !strings.HasPrefix(d.Field, dep.Field+".") && !strings.HasPrefix(d.Field, dep.Field+"[") {
		return false
	}
	if dep.Op != "" && string(d.Calls[d.Call].Op) != dep.Op {
		return false
	}
	if !says(own, dep.Message) || !says(other, dep.Other) {
		return false
	}
	return len(dep.After) == 0 || slices.ContainsFunc(d.Calls[:d.Call], func(c TensorCall) bool {
		return slices.Contains(dep.After, string(c.Op))
	})
}

// says reports whether an answer holds part: in its refusal's message,
// or in the answer as the protocol writes it without id and events (a
// tensor's grad_fn, say). An empty part is in every answer.
func says(o *Outcome, part string) bool {
	return part == "" || strings.Contains(o.Message, part) || strings.Contains(outcomeText(o), part)
}

// Departed is a program Diff set aside: a disagreement that a departure
// one driver declared explains.
type Departed struct {
	Driver    string // "A" or "B": the driver that declared it
	Departure Departure
	*Disagreement
}

// departure returns the declared departure that explains d, or nil. A
// departure both drivers declare (by name) explains nothing between them:
// two runtimes that depart alike agree there, so where they differ it is
// not that departure (the Go engine against itself, one with a fault).
func (p *pair) departure(d *Disagreement) *Departed {
	declared := func(deps []Departure, name string) bool {
		return slices.ContainsFunc(deps, func(dep Departure) bool { return dep.Name == name })
	}
	for _, side := range []struct {
		name         string
		deps, others []Departure
		own, other   *Outcome
	}{{"A", p.a.hello.Departures, p.b.hello.Departures, &d.AnswerA, &d.AnswerB}, {"B", p.b.hello.Departures, p.a.hello.Departures, &d.AnswerB, &d.AnswerA}} {
		for _, dep := range side.deps {
			if !declared(side.others, dep.Name) && dep.explains(d, side.own, side.other) {
				return &Departed{Driver: side.name, Departure: dep, Disagreement: d}
			}
		}
	}
	return nil
}
