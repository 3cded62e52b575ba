package flat

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/traces"
)

func TestEncodeDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for range 200 {
		p := Generate(r)
		if got := Decode(Encode(p)); !cmp.Equal(got, p) {
			t.Fatalf("Decode(Encode(p)) differs (-got +want):\n%s", cmp.Diff(got, p))
		}
	}
}

func TestDecode(t *testing.T) {
	alloc, allocInScope := opByte(CallOf(traces.OpAlloc), true), opByte(CallOf(traces.OpAlloc), false)
	enter, release := opByte(CallOf(traces.OpScopeEnter), false), opByte(CallOf(traces.OpRelease), false)
	preg, prel := opByte(CallOf(traces.OpParamRegister), false), opByte(CallOf(traces.OpParamRelease), false)
	tests := []struct {
		name string
		data []byte
		want []Step
	}{
		{"empty", nil, nil},
		{"misuse kept: alloc with no scope, its size byte missing", []byte{alloc},
			[]Step{{Op: traces.OpAlloc, Size: 16}}},
		{"alloc with no scope turns into scope_enter", []byte{allocInScope, allocInScope, 5},
			[]Step{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Size: 32}}},
		{"refs", []byte{enter, release, 3, release, refDead + 1, opByte(CallOf(traces.OpAcquire), false), refNull},
			[]Step{
				{Op: traces.OpScopeEnter},
				{Op: traces.OpRelease, Target: Ref{Live, 3}},
				{Op: traces.OpRelease, Target: Ref{Dead, 1}},
				{Op: traces.OpAcquire, Target: Ref{Pick: Null}},
			}},
		{"struct with two fields", []byte{enter, opByte(CallOf(traces.OpStructInit), false), 7, 2, 0, refNull},
			[]Step{{Op: traces.OpScopeEnter}, {Op: traces.OpStructInit, Size: 0, Fields: []Ref{{Live, 0}, {Pick: Null}}}}},
		{"misuse kept: param_release of no registered name", []byte{opByte(CallOf(traces.OpParamRelease), true), 4},
			[]Step{{Op: traces.OpParamRelease, Name: names[1]}}},
		{"param_release of no registered name turns into param_register", []byte{prel, 4, 0},
			[]Step{{Op: traces.OpParamRegister, Name: names[1], Target: Ref{Live, 0}}}},
		{"param_release picks among registered names", []byte{preg, nameAny + 2, 0, preg, nameAny, 0, prel, 1, prel, 7},
			[]Step{
				{Op: traces.OpParamRegister, Name: names[(nameAny+2)%3]},
				{Op: traces.OpParamRegister, Name: names[nameAny%3]},
				{Op: traces.OpParamRelease, Name: names[nameAny%3]},
				{Op: traces.OpParamRelease, Name: names[(nameAny+2)%3]},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decode(tt.data).Steps; !cmp.Equal(got, tt.want) {
				t.Errorf("Decode differs (-got +want):\n%s", cmp.Diff(got, tt.want))
			}
		})
	}
}

func TestDecodeBoundsLength(t *testing.T) {
	data := make([]byte, 10*MaxSteps)
	if n := len(Decode(data).Steps); n != MaxSteps {
		t.Errorf("decoded %d steps, want MaxSteps = %d", n, MaxSteps)
	}
}

// TestStepIsSmall holds Step to the size its comment states: a field
// added where it leaves padding grows every decoded program by a quarter.
func TestStepIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(Step{}); n > 80 {
		t.Errorf("a Step takes %d bytes, more than 80: put byte-sized fields with the others at its start", n)
	}
}
