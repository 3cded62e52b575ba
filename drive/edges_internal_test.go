package drive

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestHelloProblemsNamed: a hello that is not one is refused in the
// protocol's words, naming the field or the byte, never with encoding/json's
// Go-typed message.
func TestHelloProblemsNamed(t *testing.T) {
	for _, tc := range []struct {
		line string
		says string
	}{
		{"\xef\xbb\xbf" + `{"protocol":"tlcheck-drive","version":1,"layers":[2]}`, "byte-order mark"},
		{`{"protocol":"tlcheck-drive","version":1e400,"layers":[2]}`, `"version": number 1e400, want an integer`},
		{`{"protocol":"tlcheck-drive","version":1,"layers":[99999999999999999999]}`, `"layers": number 99999999999999999999, want an integer`},
		{`{"protocol":"tlcheck-drive","version":"1","layers":[2]}`, `"version": string, want an integer`},
		{`{"protocol":"tlcheck-drive",`, "not JSON at byte"},
	} {
		_, err := parseHello([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "'ï'") {
			t.Errorf("parseHello(%q) = %v, want an error saying %q", tc.line, err, tc.says)
		}
	}
}

// TestCallsFileLongLine: a calls file's line over the bound is named as
// such, with its line, not as bufio's "token too long".
func TestCallsFileLongLine(t *testing.T) {
	text := `{"op":"scope_enter"}` + "\n" + `{"op":"param_release","name":"` + strings.Repeat("x", 10<<20) + `"}` + "\n"
	_, err := ReadCalls(strings.NewReader(text))
	if err == nil || !strings.Contains(err.Error(), "line 2: longer than 1048576 bytes") || strings.Contains(err.Error(), "token too long") {
		t.Errorf("ReadCalls of a 10 MB line: %v", err)
	}
}

// TestProtocolWording: the hello's calls, an answer's events and a calls
// file's program are held to the protocol, each mistake named.
func TestProtocolWording(t *testing.T) {
	if _, err := parseHello([]byte(`{"protocol":"tlcheck-drive","version":1,"layers":[2],"calls":[]}`)); err == nil || !strings.Contains(err.Error(), `"calls" is empty`) {
		t.Errorf(`a hello of "calls":[]: %v, want it refused`, err)
	}
	h, err := parseHello([]byte(`{"protocol":"tlcheck-drive","version":1,"layers":[2]}`))
	if err != nil || !strings.Contains(h.offered(), "every call of layers [2]") {
		t.Errorf("a hello without calls offers %q (%v)", h.offered(), err)
	}
	if _, err := ParseAnswer([]byte(`{"id":3,"outcome":"done"}`)); err == nil || !strings.Contains(err.Error(), `no "events"`) {
		t.Errorf("an answer without events: %v, want it refused", err)
	}
	for _, tc := range []struct{ text, says string }{
		{"", "no calls in 0 lines"},
		{"# only a comment\n\n", "no calls in 2 lines"},
		{`{"op":"alloc","handle":1,"size":8}` + "\n" + `{"op":"alloc","handle":1,"size":8}`, "line 2: handle 1 was given already, on line 1"},
		{`{"op":"alloc","handle":0,"size":8}`, "line 1: handle 0 is NULL"},
		{`{"op":"end"}` + "\n#\n" + `{"op":"scope_enter"}`, "line 3: a call after end (line 1)"},
	} {
		if _, err := ReadCalls(strings.NewReader(tc.text)); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ReadCalls(%q): %v, want %q", tc.text, err, tc.says)
		}
	}
	for _, tc := range []struct{ text, says string }{
		{`{"op":"leaf","handle":1,"shape":[],"values":[1],"requires_grad":true}` + "\n" + `{"op":"neg","handle":1,"a":1}`, "line 2: handle 1 was given already"},
		{`{"op":"end"}` + "\n" + `{"op":"end"}`, "line 2: a call after end"},
		{"\n", "no calls"},
	} {
		if _, err := ReadTensorCalls(strings.NewReader(tc.text)); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ReadTensorCalls(%q): %v, want %q", tc.text, err, tc.says)
		}
	}
}

// TestDepartureExplains: a declared departure explains a disagreement
// only where each of its conditions holds; a hello's departures are
// checked.
func TestDepartureExplains(t *testing.T) {
	calls := []TensorCall{{Op: TensorLeaf, Handle: 1}, {Op: TensorDiv, Handle: 2, A: 1, B: 1}, {Op: TensorBackward, Target: 2}, {Op: TensorEnd}}
	d := &Disagreement{Calls: calls, Call: 2, Difference: Difference{Field: "message"}}
	own := &Outcome{Refused: true, Message: "modified by an inplace operation: x"}
	other := &Outcome{Refused: true, Message: "modified by an inplace operation: y"}
	for _, tc := range []struct {
		dep  Departure
		want bool
	}{
		{Departure{Field: "message", Op: "backward", Message: "inplace", Other: "inplace", After: []string{"div"}}, true},
		{Departure{Field: "message"}, true},
		{Departure{Field: "mess"}, false}, // a prefix of the path, not of a word
		{Departure{Field: "tensor"}, false},
		{Departure{Op: "leaf"}, false},
		{Departure{Message: "matrix"}, false},
		{Departure{Other: "matrix"}, false},
		{Departure{After: []string{"mul"}}, false},
		{Departure{After: []string{"backward"}}, false}, // before the call, not at it
	} {
		if got := tc.dep.explains(d, own, other); got != tc.want {
			t.Errorf("%+v explains: %v, want %v", tc.dep, got, tc.want)
		}
	}
	grads := &Disagreement{Calls: calls, Call: 2, Difference: Difference{Field: "grads[handle 1].values[0]"}}
	if !(&Departure{Field: "grads"}).explains(grads, own, other) {
		t.Error(`field "grads" does not explain grads[handle 1].values[0]`)
	}
	broke := &Disagreement{Calls: calls, Call: 2, Difference: Difference{Field: "driver B exit"}}
	if (&Departure{Op: "backward"}).explains(broke, own, other) {
		t.Error("a driver that broke was explained by a departure")
	}
	for _, tc := range []struct{ deps, says string }{
		{`[{"field":"message"}]`, `needs a "name"`},
		{`[{"name":"x"}]`, "explains every disagreement"},
		{`[{"name":"x","field":"events"}]`, "not a field of an answer"},
		{`[{"name":"x","op":"frobnicate"}]`, "not a layer-5 call"},
		{`[{"name":"x","field":"outcome"},{"name":"x","field":"message"}]`, "declared twice"},
	} {
		_, err := parseHello([]byte(`{"protocol":"tlcheck-drive","version":1,"layers":[5],"departures":` + tc.deps + `}`))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("departures %s: %v, want %q", tc.deps, err, tc.says)
		}
	}
}

// TestCallsFileBounds: a calls file a correct runtime cannot answer
// within tlcheck's bounds is refused as it is read, naming the line where
// it crosses them, not run and blamed on the driver.
func TestCallsFileBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"op":"scope_enter"}` + "\n")
	for h := 1; h <= 30000; h++ {
		fmt.Fprintf(&b, `{"op":"alloc","handle":%d,"size":8}`+"\n", h)
	}
	b.WriteString(`{"op":"scope_exit"}` + "\n" + `{"op":"end"}` + "\n")
	_, err := ReadCalls(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), "line 16385: the program makes more than 16383 objects") {
		t.Errorf("30,000 allocations: %v", err)
	}
	b.Reset()
	for range 70000 {
		b.WriteString(`{"op":"scope_enter"}` + "\n")
	}
	if _, err := ReadCalls(strings.NewReader(b.String())); err == nil || !strings.Contains(err.Error(), "line 65537: ") {
		t.Errorf("70,000 calls: %v", err)
	}
	b.Reset()
	b.WriteString(`{"op":"leaf","handle":1,"shape":[20000],"values":[`)
	for i := range 20000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('1')
	}
	b.WriteString(`],"requires_grad":true}` + "\n")
	if _, err := ReadTensorCalls(strings.NewReader(b.String())); err == nil || !strings.Contains(err.Error(), "line 1: a leaf of 20000 values") {
		t.Errorf("a leaf of 20,000 values: %v", err)
	}
}

// TestListingBounded: a run's listing stays a few hundred lines of a few
// hundred bytes, whatever the run: a name of 512 KiB is clipped, a call's
// thousands of frees summed up, a long run's middle left out, the failing
// call always shown.
func TestListingBounded(t *testing.T) {
	long := strings.Repeat("n", 512<<10)
	res := &Result{Calls: []Call{{Op: traces.OpParamRelease, Name: long}}, Outcomes: []Outcome{{Event: 0, Events: 1}},
		Trace: []traces.Event{{Op: traces.OpParamRelease, Name: long}}}
	for i := range 5000 {
		res.Calls = append(res.Calls, Call{Op: traces.OpScopeExit})
		o := Outcome{Event: len(res.Trace), Events: 1}
		res.Trace = append(res.Trace, traces.Event{Op: traces.OpScopeExit})
		if i == 3000 {
			for k := range 10000 {
				res.Trace = append(res.Trace, traces.Event{Op: traces.OpFree, Addr: traces.Addr(0x1000 + 16*k)})
			}
			o.Events += 10000
		}
		res.Outcomes = append(res.Outcomes, o)
	}
	res.Failure = &Failure{What: "premature-free", Call: 4000}
	l := res.Listing()
	if len(l) > 64<<10 || strings.Count(l, "\n") > 400 {
		t.Fatalf("listing of %d bytes, %d lines: want it bounded", len(l), strings.Count(l, "\n"))
	}
	for _, want := range []string{"... (524320 bytes)", `=> 4000  {"op":"scope_exit"}`, "calls not shown", "  5000  "} {
		if !strings.Contains(l, want) {
			t.Errorf("listing lacks %q", want)
		}
	}
	if strings.Contains(l, "3000  ") && !strings.Contains(l, "more events") {
		t.Errorf("call 3000's 10,000 frees are not summed up")
	}
}
