package drive_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/longtest"
	"github.com/tlcheck/tlcheck/properties/flat"
)

// Each bad driver is a clear finding or error, in about its timeout: never
// a hang of the harness, never memory that grows with what the driver
// writes.
func TestBadDrivers(t *testing.T) {
	// The sleeping driver is given a short call timeout; the others fail
	// at once, and a long one keeps a loaded machine from timing them out
	// first.
	const short, long = 300 * time.Millisecond, 20 * time.Second
	p, err := flat.ParseProgram("scope_enter\nalloc 16\nrelease live[0]\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		driver string
		start  bool   // Start itself fails
		what   string // the failure's kind, or Start's error's
		says   string // in its message
		stderr string // in the stderr shown with it
	}{
		{driver: "garbage", what: "protocol", says: `"Segmentation fault? no: just garbage", which is not an answer`},
		{driver: "exit", what: "exit", says: "exited: exit status 3", stderr: "about to die in the middle of a program"},
		{driver: "sleep", what: "timeout", says: "no answer within 300ms while waiting for the answer to the reset"},
		{driver: "wrong-id", what: "protocol", says: "a line it was not given"},
		{driver: "long-line", what: "protocol", says: "a line longer than 1048576 bytes"},
		{driver: "no-hello", start: true, what: "start", says: `"protocol" is "something-else"`},
		{driver: "stderr:" + stderrBytes(), what: "exit", says: "exit status 1", stderr: "earlier bytes dropped]"},
	} {
		t.Run(strings.Split(tc.driver, ":")[0], func(t *testing.T) {
			start := time.Now()
			timeout := long
			if tc.driver == "sleep" {
				timeout = short
			}
			cfg := testDriver(tc.driver, timeout)
			d, err := drive.Start(cfg)
			if tc.start {
				var tr *drive.Trouble
				if !errors.As(err, &tr) || string(tr.Kind) != tc.what || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("Start: %v, want a %s trouble saying %q", err, tc.what, tc.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			_, calls := drive.Lower(p, nil)
			res, err := runWithTimeout(t, d, calls, cfg.CallTimeout)
			if err != nil {
				t.Fatal(err)
			}
			f := res.Failure
			if f == nil || f.What != tc.what || !strings.Contains(f.Message, tc.says) || !strings.Contains(f.Stderr, tc.stderr) {
				t.Fatalf("failure %+v, want %s saying %q with stderr %q", f, tc.what, tc.says, tc.stderr)
			}
			if strings.HasPrefix(tc.driver, "stderr") {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapInuse > 256<<20 {
					t.Errorf("heap in use %d MiB after the driver's stderr flood", m.HeapInuse>>20)
				}
				if got := len(f.Stderr); got > 65<<10 || !strings.Contains(f.Stderr, "the last words of the flood") {
					t.Errorf("kept %d bytes of stderr, want at most 64 KiB and a note, ending with its last words", got)
				}
			}
			if !f.Trouble() || d.Broken() == nil {
				t.Errorf("Trouble() = %v, Broken() = %v: want the driver broken", f.Trouble(), d.Broken())
			}
			if took := time.Since(start); tc.driver == "sleep" && took > timeout+5*time.Second {
				t.Errorf("took %v", took)
			}
			t.Logf("%v (stderr %d bytes)", f, len(f.Stderr))
		})
	}
}

// stderrBytes is how much the stderr driver writes: 1 GiB in CI's long
// step (package longtest), 64 MiB in the quick suite and with -short.
func stderrBytes() string {
	if testing.Short() {
		return "67108864"
	}
	return longtest.Choose("67108864", "1073741824")
}

// runWithTimeout runs calls on d, failing the test if the harness itself
// does not return in time.
func runWithTimeout(t *testing.T, d *drive.Driver, calls []drive.Call, timeout time.Duration) (*drive.Result, error) {
	t.Helper()
	type out struct {
		res *drive.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := d.Run(calls)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(timeout + 10*time.Second):
		t.Fatal("the harness hung")
		return nil, nil
	}
}

// TestRestart: a driver that crashes is a finding, shrunk by starting it
// again for each candidate; with Restart the search goes on after it.
func TestRestart(t *testing.T) {
	r, err := drive.NewRunner(testDriver("crash-on:param_release", hangTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	found, n, err := r.Search(drive.Options{Seed: 1, Restart: true, More: func(n int) bool { return n < 30 }})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 2 {
		t.Fatalf("%d findings in %d programs, want several", len(found), n)
	}
	for _, f := range found {
		fail := f.Failure()
		if fail.What != "exit" || !strings.Contains(fail.Stderr, "crashing on") || len(f.Result.Calls) > 4 {
			t.Errorf("finding %v, %d calls, stderr %q; want an exit with its stderr, in at most 4 calls:\n%s",
				fail, len(f.Result.Calls), fail.Stderr, f.Result.Listing())
		}
	}
	if r.Starts() <= len(found) {
		t.Errorf("%d starts for %d findings: shrinking and restarting start the driver again", r.Starts(), len(found))
	}
	t.Logf("%d findings in %d programs, %d starts; the first:\n%s", len(found), n, r.Starts(), found[0].Result.Listing())
}
