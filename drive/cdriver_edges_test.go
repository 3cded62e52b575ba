package drive_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
)

// TestCDriverSaysWhy: examples/cruntime's driver refuses an argument it
// does not know (a mistyped --fault= would run the runtime without its
// fault and pass), and says why it dies when an allocation fails.
func TestCDriverSaysWhy(t *testing.T) {
	bin := buildCDriver(t)
	cmd := exec.Command(bin, "--fault=unregister-releases")
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if ok := errors.As(err, &exit); !ok || exit.ExitCode() != 2 || !strings.Contains(string(out), "unknown argument --fault=unregister-releases") {
		t.Errorf("--fault= (for --faults=): %v, want exit 2 naming the argument\n%s", err, out)
	}

	r := newRunner(t, drive.Config{Command: []string{bin}, CallTimeout: hangTimeout})
	res, err := r.Run([]drive.Call{callOf(t, `{"op":"scope_enter"}`), callOf(t, `{"op":"alloc","handle":1,"size":4611686018427387904}`),
		callOf(t, `{"op":"scope_exit"}`), callOf(t, `{"op":"end"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Failure; f == nil || f.What != "exit" || !strings.Contains(f.Stderr, "out of memory: 4611686018427387904 bytes for an object") {
		t.Errorf("an allocation of 2^62 bytes: %v (stderr %q), want an exit that says it ran out of memory", f, f.Stderr)
	}
}
