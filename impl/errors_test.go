package impl_test

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

func TestErrorMessage(t *testing.T) {
	cases := []struct {
		err  *impl.Error
		want string
	}{
		{&impl.Error{Kind: traces.DoubleFree, Op: traces.OpRelease, Addr: 0x40000000, Msg: "object already freed"},
			"double-free: release 0x40000000: object already freed"},
		{&impl.Error{Kind: traces.Misuse, Op: traces.OpScopeExit, Msg: "no scope is open"},
			"misuse: scope_exit: no scope is open"},
		{&impl.Error{Kind: traces.Misuse, Op: traces.OpParamRelease, Name: "w", Msg: "no parameter is registered under this name"},
			"misuse: param_release w: no parameter is registered under this name"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// TestJoinedErrors checks that a call finding several misuses returns
// them all, and that errors.As finds the first.
func TestJoinedErrors(t *testing.T) {
	rt := impl.New(impl.Config{})
	_, err := rt.StructInit(16, []traces.Addr{0x1230, 0x4560})
	var first *impl.Error
	if !errors.As(err, &first) || first.Kind != traces.Misuse {
		t.Fatalf("errors.As found %v, want the misuse (no scope) first", first)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 3 {
		t.Fatalf("got %v, want three joined errors", err)
	}
}
