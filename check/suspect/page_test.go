package suspect_test

import (
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/export"
)

func TestResultPage(t *testing.T) {
	kept := suspect.Suspect{Site: "train.py:34", BlocksPerIteration: 2, BytesPerIteration: 1024,
		FirstIteration: 1, IterationsSeen: 9, Complete: 10, Steadiness: 0.9, Confidence: "medium",
		Blocks: 18, Bytes: 9216,
		Evidence: []suspect.Block{{Event: 40, Size: 512}, {Event: 400, Size: 512}},
		Stack:    []suspect.Frame{{File: "functional.py", Line: 3494, Name: "cross_entropy"}, {File: "train.py", Line: 34, Name: "<module>"}}}
	for _, c := range []struct {
		name string
		r    *suspect.Result
		want []export.PageSuspect
	}{
		{"nil", nil, nil},
		{"none", &suspect.Result{Suspects: []suspect.Suspect{}}, nil},
		{"one", &suspect.Result{Suspects: []suspect.Suspect{kept}}, []export.PageSuspect{{
			Site: "train.py:34", BytesPerIteration: 1024, BlocksPerIteration: 2, Iterations: 9,
			Confidence: "medium: 9 of 10 complete iterations, 90% of them alike",
			Stack:      []string{"cross_entropy functional.py:3494", "<module> train.py:34"},
			Events:     []int{40, 400},
		}}},
		{"no stack", &suspect.Result{Suspects: []suspect.Suspect{{Site: "a.c:1", Stack: []suspect.Frame{}, Confidence: "low"}}}, []export.PageSuspect{{
			Site: "a.c:1", Confidence: "low: 0 of 0 complete iterations, 0% of them alike",
		}}},
	} {
		if got := c.r.Page(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Page() = %+v, want %+v", c.name, got, c.want)
		}
	}
}
