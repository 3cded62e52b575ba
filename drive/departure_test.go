package drive_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
)

// The test binary serves the Go autograd driver with departures of the
// test's added to its hello: departingEnv is "FAULT|DEPARTURES", the
// engine's fault ("" for none) and a JSON array of departures.
const departingEnv = "TLCHECK_TEST_DEPARTING_DRIVER"

func init() {
	v, ok := os.LookupEnv(departingEnv)
	if !ok {
		return
	}
	fault, deps, _ := strings.Cut(v, "|")
	var cfg impl.Config
	if fault != "" {
		cfg.Faults = []impl.Fault{impl.Fault(fault)}
	}
	out := &helloAdder{w: os.Stdout, add: deps}
	if err := impldriver.ServeAutograd(os.Stdin, out, cfg, autograd.Config{Lifetime: autograd.LifetimePyTorch}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helloAdder adds departures to the first line written through it.
type helloAdder struct {
	w    io.Writer
	add  string
	done bool
	buf  []byte
}

func (h *helloAdder) Write(p []byte) (int, error) {
	if h.done {
		return h.w.Write(p)
	}
	h.buf = append(h.buf, p...)
	i := bytes.IndexByte(h.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	var hello map[string]any
	if err := json.Unmarshal(h.buf[:i], &hello); err != nil {
		return 0, err
	}
	var deps []any
	if err := json.Unmarshal([]byte(h.add), &deps); err != nil {
		return 0, err
	}
	old, _ := hello["departures"].([]any)
	hello["departures"] = append(old, deps...)
	line, err := json.Marshal(hello)
	if err != nil {
		return 0, err
	}
	h.done = true
	if _, err := h.w.Write(append(append(line, '\n'), h.buf[i+1:]...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// departing returns a Config of the Go autograd driver with fault on,
// declaring departures (a JSON array) besides its own.
func departing(fault, departures string) drive.Config {
	return drive.Config{Command: []string{os.Args[0]}, Env: append(os.Environ(), departingEnv+"="+fault+"|"+departures), CallTimeout: hangTimeout}
}

// TestDiffHonoursDepartures: a disagreement that a departure one driver
// declares explains sets its program aside, counted under the driver and
// the departure's name, and the comparison goes on; one it does not
// explain is still found; Strict sets nothing aside.
func TestDiffHonoursDepartures(t *testing.T) {
	const bumps = `[{"name":"double-bump","field":"tensor.version","note":"this engine counts two versions an in-place op"}]`
	a := newRunner(t, departing(string(autograd.FaultAutogradDoubleBump), bumps))
	b := newRunner(t, goAutograd(""))
	if deps := a.Hello().Departures; len(deps) != 3 || deps[0].Name != "matmul-matrices-only" || deps[2].Name != "double-bump" {
		t.Fatalf("the hello's departures %+v, want the engine's and the test's", deps)
	}
	set := map[string]int{}
	d, n, err := drive.Diff(a, b, drive.DiffOptions{Seed: 1, More: func(n int) bool { return n < 100 },
		Departed: func(dep *drive.Departed) { set[dep.Driver+" "+dep.Departure.Name]++ }})
	if err != nil {
		t.Fatal(err)
	}
	if d != nil && strings.HasPrefix(d.Field, "tensor.version") {
		t.Fatalf("a disagreement the declared departure explains was reported:\n%s", d.Report())
	}
	if set["A double-bump"] == 0 || set["A matmul-matrices-only"] != 0 {
		t.Errorf("set aside %v in %d programs: want programs under A's double-bump (and no matmul: both engines refuse alike)", set, n)
	}
	t.Logf("%d programs, set aside %v, then %v", n, set, d)

	d, _, err = drive.Diff(a, b, drive.DiffOptions{Seed: 1, Strict: true, More: func(n int) bool { return n < 100 }})
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || d.Field != "tensor.version" {
		t.Errorf("Strict: %v, want the version's disagreement", d)
	}

	// A departure both drivers declare explains nothing between them.
	both := newRunner(t, departing("", bumps))
	d, _, err = drive.Diff(a, both, drive.DiffOptions{Seed: 1, More: func(n int) bool { return n < 100 }})
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || d.Field != "tensor.version" {
		t.Errorf("a departure both declare: %v, want the version's disagreement", d)
	}

	// A departure that does not fit is not taken.
	other := newRunner(t, departing(string(autograd.FaultAutogradDoubleBump), `[{"name":"grads-only","field":"grads"}]`))
	d, _, err = drive.Diff(other, b, drive.DiffOptions{Seed: 1, More: func(n int) bool { return n < 100 }})
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || d.Field != "tensor.version" {
		t.Errorf("a departure of another field: %v, want the version's disagreement", d)
	}
}
