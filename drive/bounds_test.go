package drive_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/traces"
)

// Every bound of the harness at, just below and just above its value,
// through drivers served in this process: a program's events, an
// answer's events and bytes, a calls file's line, the call timeout.
// (bounds_internal_test.go has the line reader's, an answer's events as
// parsed and the stderr kept; kill_internal_test.go the start timeout.)

// overBound reports whether the driver was stopped, its error saying so.
func overBound(d *drive.Driver, says string) bool {
	return d.Broken() != nil && strings.Contains(d.Broken().Error(), says)
}

// TestProgramEventsBound: a program's answers may hold 65,536 events
// together, each answer within its own bound; one more stops the driver.
func TestProgramEventsBound(t *testing.T) {
	const bound = 1 << 16
	for _, total := range []int{bound - 1, bound, bound + 1} {
		t.Run(fmt.Sprint(total), func(t *testing.T) {
			// Calls 0 to 2: 16,384 events each; call 3: 16,383; call 4:
			// the rest.
			sizes := []int{1 << 14, 1 << 14, 1 << 14, 1<<14 - 1}
			sizes = append(sizes, total-(4<<14-1))
			d := startFunc(t, drive.Config{}, lineServer(hello2, func(k int, id int64) []byte {
				if k == 0 {
					return fmt.Appendf(nil, `{"id":%d,"events":[],"outcome":"done"}`, id)
				}
				return frees(id, sizes[k-1])
			}))
			res, err := d.Run(allocs(5))
			if err != nil {
				t.Fatal(err)
			}
			stopped := overBound(d, "more than 65536 events in one program, at the answer to call 4")
			switch {
			case total <= bound && (stopped || d.Broken() != nil || len(res.Trace) != total):
				t.Fatalf("%d events in a program: %d held, the driver broken: %v", total, len(res.Trace), d.Broken())
			case total > bound && (!stopped || len(res.Trace) > bound):
				t.Fatalf("%d events in a program: %d held, the driver broken: %v; want it stopped at call 4", total, len(res.Trace), d.Broken())
			}
		})
	}
}

// TestAnswerBoundsThroughDriver: an answer's events (16,384) and bytes
// (MaxLine: the default's 1 MiB and a small one), at, below and above:
// above is not the protocol, at the answer it is.
func TestAnswerBoundsThroughDriver(t *testing.T) {
	const events = 1 << 14
	for _, n := range []int{events - 1, events, events + 1} {
		d := startFunc(t, drive.Config{}, lineServer(hello2, func(k int, id int64) []byte {
			if k == 0 {
				return fmt.Appendf(nil, `{"id":%d,"events":[],"outcome":"done"}`, id)
			}
			return frees(id, n)
		}))
		res, err := d.Run(allocs(1))
		if err != nil {
			t.Fatal(err)
		}
		stopped := overBound(d, "more than 16384 events")
		if stopped != (n > events) || !stopped && len(res.Trace) != n {
			t.Errorf("an answer of %d events: %d held, the driver broken: %v", n, len(res.Trace), d.Broken())
		}
	}
	for _, max := range []int{1000, 1 << 20} {
		for _, n := range []int{max - 1, max, max + 1} {
			d := startFunc(t, drive.Config{MaxLine: max}, lineServer(hello2, func(k int, id int64) []byte {
				return padded(fmt.Sprintf(`{"id":%d,"events":[],"outcome":"done"`, id), n)
			}))
			res, err := d.Run(nil)
			if err != nil {
				t.Fatal(err)
			}
			stopped := overBound(d, fmt.Sprintf("a line longer than %d bytes while waiting for the answer to the reset", max))
			if stopped != (n > max) || !stopped && res.Failure != nil {
				t.Errorf("an answer of %d bytes, the bound %d: failure %v, the driver broken: %v", n, max, res.Failure, d.Broken())
			}
		}
	}
}

// padded closes the JSON object open with spaces and a brace, n bytes in
// all.
func padded(open string, n int) []byte {
	return []byte(open + strings.Repeat(" ", n-len(open)-1) + "}")
}

// TestCallsFileLineBound: a calls file's line may be 1 MiB, its newline
// counted (a line the Go driver, impldriver, reads too); one byte more is
// an error that names the line.
func TestCallsFileLineBound(t *testing.T) {
	const bound = 1 << 20
	for _, n := range []int{bound - 2, bound - 1, bound} { // the line's bytes, its newline not counted
		file := `{"op":"scope_enter"}` + "\n" + string(padded(`{"op":"scope_exit"`, n)) + "\n" + `{"op":"end"}` + "\n"
		calls, err := drive.ReadCalls(strings.NewReader(file))
		switch {
		case n+1 <= bound && (err != nil || len(calls) != 3 || calls[1].Op != traces.OpScopeExit):
			t.Errorf("a line of %d bytes and its newline: %d calls, %v", n, len(calls), err)
		case n+1 > bound && (err == nil || !strings.HasPrefix(err.Error(), "line 2: ")):
			t.Errorf("a line of %d bytes and its newline: %v, want an error of line 2", n, err)
		}
	}
}

// TestCallTimeoutBound: an answer well within the call timeout is taken,
// one well after it is a timeout, at the call it was waited for. (At the
// timeout itself a machine's load decides: no test can hold it there.)
func TestCallTimeoutBound(t *testing.T) {
	const timeout = 500 * time.Millisecond
	for _, delay := range []time.Duration{0, timeout / 5, 3 * timeout} {
		d := startFunc(t, drive.Config{CallTimeout: timeout}, lineServer(hello2, func(k int, id int64) []byte {
			if k == 1 {
				time.Sleep(delay)
			}
			if k == 1 {
				return fmt.Appendf(nil, `{"id":%d,"events":[{"op":"scope_enter"}],"outcome":"done"}`, id)
			}
			return fmt.Appendf(nil, `{"id":%d,"events":[],"outcome":"done"}`, id)
		}))
		start := time.Now()
		res, err := d.Run([]drive.Call{{Op: traces.OpScopeEnter}})
		if err != nil {
			t.Fatal(err)
		}
		f := res.Failure
		if delay < timeout && f != nil {
			t.Errorf("an answer after %v, the timeout %v: %v", delay, timeout, f)
		}
		if delay > timeout && (f == nil || f.What != string(drive.TroubleTimeout) || f.Call != 0 ||
			!strings.Contains(f.Message, "no answer within 500ms while waiting for the answer to call 0")) {
			t.Errorf("an answer after %v, the timeout %v: %v, want a timeout at call 0", delay, timeout, f)
		}
		if took := time.Since(start); delay > timeout && took > delay {
			t.Errorf("a timeout of %v took %v: the harness waited for the late answer", timeout, took)
		}
	}
}
