package impldriver_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
)

func TestServe(t *testing.T) {
	for _, tc := range []struct {
		in, out, err string
	}{
		{in: `{"id":1,"op":"reset"}` + "\n" + `{"id":2,"op":"release","target":1}` + "\n",
			out: `{"id":2,"events":[{"op":"release","addr":"0x0"}],"outcome":"done"}`},
		{in: `{"id":1,"op":"reset"}` + "\n" + `{"id":2,"op":"scope_exit"}`, // no newline at the end
			out: `{"id":2,"events":[{"op":"scope_exit"}],"outcome":"refused","message":"misuse: scope_exit: no scope is open","kinds":["misuse"]}`},
		{in: `{"id":1,"op":"free","addr":"0x10"}` + "\n", err: `op "free" is not a call`},
		{in: strings.Repeat("x", impldriver.MaxLine+1) + "\n", err: "a line longer than"},
	} {
		var out bytes.Buffer
		err := impldriver.Serve(strings.NewReader(tc.in), &out, impl.Config{})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Serve(%.40q): %v, want an error with %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("Serve(%.40q): %v", tc.in, err)
		case !strings.Contains(out.String(), tc.out+"\n"):
			t.Errorf("Serve(%.40q) wrote\n%s\nwant a line\n%s", tc.in, out.String(), tc.out)
		}
	}
	if err := impldriver.Serve(strings.NewReader(""), &bytes.Buffer{}, impl.Config{Faults: []impl.Fault{"nope"}}); err == nil {
		t.Error("Serve with an unknown fault: no error")
	}
}
