package drive_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/drivetest"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
)

// The test binary also serves quirky drivers, each correct but for one
// thing at the edges of the protocol: run with quirkEnv set to the
// quirk's name, it is that driver.
const quirkEnv = "TLCHECK_TEST_QUIRK_DRIVER"

func init() {
	if q := os.Getenv(quirkEnv); q != "" {
		os.Exit(serveQuirk(q))
	}
}

// quirk returns a Config that starts this test binary as quirky driver q.
func quirk(q string, timeout time.Duration) drive.Config {
	return drive.Config{Command: []string{os.Args[0]}, Env: append(os.Environ(), quirkEnv+"="+q), CallTimeout: timeout}
}

const quirkHello = `{"protocol":"tlcheck-drive","version":1,"layers":[2],"source":"quirky driver"}`

// serveQuirk runs quirky driver q.
func serveQuirk(q string) int {
	in, out := bufio.NewReader(os.Stdin), os.Stdout
	ids := func() []int { // the ids of the lines up to the next end, read whole
		var ids []int
		for {
			line, err := in.ReadString('\n')
			if err != nil {
				return ids
			}
			var id int
			fmt.Sscanf(line, `{"id":%d`, &id)
			ids = append(ids, id)
			if strings.Contains(line, `"op":"end"`) {
				return ids
			}
		}
	}
	switch q {
	case "answer-twice": // answers the reset twice
		fmt.Fprintln(out, quirkHello)
		id := ids()[0]
		fmt.Fprintf(out, `{"id":%d,"events":[],"outcome":"done"}`+"\n", id)
		fmt.Fprintf(out, `{"id":%d,"events":[],"outcome":"done"}`+"\n", id)
	case "out-of-order": // answers the first call before the reset
		fmt.Fprintln(out, quirkHello)
		got := ids()
		fmt.Fprintf(out, `{"id":%d,"events":[{"op":"scope_enter"}],"outcome":"done"}`+"\n", got[1])
	case "no-events": // answers the reset without events
		fmt.Fprintln(out, quirkHello)
		fmt.Fprintf(out, `{"id":%d,"outcome":"done"}`+"\n", ids()[0])
	case "crash-unflushed-silent": // reads a whole program, then dies answering none of it, silently
		fmt.Fprintln(out, quirkHello)
		ids()
		return 3
	default: // the Go runtime's driver, then one thing wrong at the end of its input
		if op, ok := strings.CutPrefix(q, "hang-on:"); ok { // the Go runtime's driver, which hangs at a call of op
			needle := []byte(`"op":"` + op + `"`)
			if err := impldriver.Serve(hangOn{in, needle}, out, impl.Config{}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		}
		return serveThenQuirk(q)
	}
	time.Sleep(time.Hour)
	return 0
}

// serveThenQuirk serves impldriver until its stdin ends, then does q.
func serveThenQuirk(q string) int {
	if err := impldriver.Serve(os.Stdin, os.Stdout, impl.Config{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "quirky driver: at the end of my input, doing", q)
	switch q {
	case "exit-4-at-eof":
		return 4
	case "hang-at-eof":
		time.Sleep(time.Hour)
	case "junk-at-eof":
		fmt.Println("goodbye!")
	case "child-holds-stdout": // a child that inherits stdout outlives the driver
		cmd := exec.Command("sleep", "30")
		cmd.Stdout = os.Stdout
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown quirk", q)
		return 2
	}
	return 0
}

// TestAnswerIDsNamed: an answer with another id than the one expected
// says which mistake it is: an answer twice, out of order, or to a line
// never sent.
func TestAnswerIDsNamed(t *testing.T) {
	calls := []drive.Call{callOf(t, `{"op":"scope_enter"}`), callOf(t, `{"op":"end"}`)}
	for _, tc := range []struct{ quirk, says string }{
		{"answer-twice", "which it had answered already: an answer twice"},
		{"out-of-order", "which was sent after it: an answer out of order"},
		{"no-events", `no "events"`},
	} {
		t.Run(tc.quirk, func(t *testing.T) {
			d, err := drive.Start(quirk(tc.quirk, hangTimeout))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			res, err := d.Run(calls)
			if err != nil {
				t.Fatal(err)
			}
			if f := res.Failure; f == nil || f.What != "protocol" || !strings.Contains(f.Message, tc.says) {
				t.Errorf("failure %v, want a protocol failure saying %q", f, tc.says)
			}
		})
	}
}

// callOf parses a call line.
func callOf(t *testing.T, line string) drive.Call {
	t.Helper()
	c, _, _, err := drive.ParseCall([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCrashAmongOutstanding: a driver that dies with a whole program
// unanswered is not blamed on the reset alone: the failure says the cause
// lies among the calls sent and unanswered, naming the range, and a
// driver that said nothing on stderr is reported as having said nothing.
func TestCrashAmongOutstanding(t *testing.T) {
	d, err := drive.Start(quirk("crash-unflushed-silent", hangTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	calls := []drive.Call{callOf(t, `{"op":"scope_enter"}`), callOf(t, `{"op":"alloc","handle":1,"size":8}`),
		callOf(t, `{"op":"scope_exit"}`), callOf(t, `{"op":"end"}`)}
	res, err := d.Run(calls)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Failure
	if f == nil || f.What != "exit" || !strings.Contains(f.Message, "5 lines were sent and not answered, so the cause lies among them, from the reset to call 3 (end)") {
		t.Fatalf("failure %v, want an exit whose cause lies among the reset and calls 0 to 3", f)
	}
	if err := d.Broken(); err == nil || !strings.Contains(err.Error(), "the driver wrote nothing to its stderr") {
		t.Errorf("the trouble %v does not say the driver's stderr was empty", err)
	}
}

// TestCloseSaysWhich: a driver that misbehaves at the end of its input
// is reported saying how: a failing exit, junk after its last answer, a
// hang, and a child of its holding its stdout (not a hang of its own),
// each with the driver's stderr.
func TestCloseSaysWhich(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	for _, tc := range []struct{ quirk, kind, says string }{
		{"exit-4-at-eof", "exit", "it exited (exit status 4) at the end of its input"},
		{"junk-at-eof", "protocol", `it wrote "goodbye!" after its last answer`},
		{"hang-at-eof", "timeout", "it did not exit within 1.5s of the end of its input: a hang at the end"},
		{"child-holds-stdout", "timeout", "it exited (status 0) at the end of its input, but its stdout stayed open 1.5s after: a process it started holds it"},
	} {
		t.Run(tc.quirk, func(t *testing.T) {
			d, err := drive.Start(quirk(tc.quirk, timeout))
			if err != nil {
				t.Fatal(err)
			}
			res, err := d.Run([]drive.Call{callOf(t, `{"op":"scope_enter"}`), callOf(t, `{"op":"scope_exit"}`), callOf(t, `{"op":"end"}`)})
			if err != nil || res.Failure != nil {
				t.Fatalf("the program before the end: %v, %v", err, res.Failure)
			}
			err = d.Close()
			var tr *drive.Trouble
			if !errors.As(err, &tr) || string(tr.Kind) != tc.kind || !strings.Contains(tr.What, tc.says) || !strings.Contains(tr.Stderr, "at the end of my input, doing "+tc.quirk) {
				t.Errorf("Close: %v, want a %s trouble saying %q, with the driver's stderr", err, tc.kind, tc.says)
			}
		})
	}
}

// hangOn is stdin for a driver that hangs when input holding needle
// arrives, before it answers it.
type hangOn struct {
	r      *bufio.Reader
	needle []byte
}

func (h hangOn) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if bytes.Contains(p[:n], h.needle) {
		fmt.Fprintf(os.Stderr, "driver: hanging on %s\n", h.needle)
		time.Sleep(time.Hour)
	}
	return n, err
}

// fatalTB is a testing.TB whose Fatal ends the goroutine and keeps the
// message, to see what drivetest.Test reports.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fatalTB) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }

// TestTestShrinksHang: drivetest.Test over a driver that hangs at a call
// reports the program shrunk (it printed it as generated, shrinking
// having had time for two candidates at 10 s a hang), in well under the
// 50 s it took.
func TestTestShrinksHang(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a hang takes its timeouts (20 s)")
	}
	cfg := quirk("hang-on:param_release", hangTimeout)
	os.Setenv(quirkEnv, "hang-on:param_release") // drivetest.Test takes a command alone: the environment is the process's
	defer os.Unsetenv(quirkEnv)
	start := time.Now()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		drivetest.Test(tb, cfg.Command...)
	}()
	<-done
	took := time.Since(start)
	calls := strings.Count(tb.msg, "\n{\"op\":")
	t.Logf("after %v, %d calls:\n%s", took, calls, tb.msg)
	if !strings.Contains(tb.msg, "timeout at call") || calls == 0 || calls > 6 {
		t.Errorf("drivetest.Test reported %d calls: want a timeout, shrunk to a few", calls)
	}
	if took > 40*time.Second {
		t.Errorf("drivetest.Test took %v over a hang", took)
	}
}
