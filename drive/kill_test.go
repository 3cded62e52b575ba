package drive_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// See kill_internal_test.go: these pin issue 29's items 3, 4, 5, 7 and 8
// from outside the package, through drivers served in this process
// (drive.StartFunc, export_test.go) or by this test binary.

// hello2 is the hello of a driver of layers 2 and 3.
var hello2 = fmt.Sprintf(`{"protocol":%q,"version":1,"layers":[2,3],"source":"a test's driver"}`, drive.ProtocolName)

// lineServer returns a driver's serve function that writes hello, then
// for each line it reads (the reset, then each call) the answer answer
// gives for the k-th line and its id; no answer (nil) is none. It reads
// until its stdin ends.
func lineServer(hello string, answer func(k int, id int64) []byte) func(io.Reader, io.Writer) error {
	return func(stdin io.Reader, stdout io.Writer) error {
		if _, err := io.WriteString(stdout, hello+"\n"); err != nil {
			return err
		}
		r := bufio.NewReader(stdin)
		for k := 0; ; k++ {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return nil
			}
			var id int64
			fmt.Sscanf(string(line), `{"id":%d`, &id)
			if a := answer(k, id); a != nil {
				if _, err := stdout.Write(slices.Concat(a, []byte("\n"))); err != nil {
					return err
				}
			}
		}
	}
}

// startFunc starts a driver served by serve in this process.
func startFunc(t *testing.T, cfg drive.Config, serve func(io.Reader, io.Writer) error) *drive.Driver {
	t.Helper()
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = hangTimeout
	}
	d, err := drive.StartFunc(cfg, serve)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// frees returns an answer with id of n events, each a free.
func frees(id int64, n int) []byte {
	b := fmt.Appendf(nil, `{"id":%d,"outcome":"done","events":[`, id)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"op":"free","addr":"0x10"}`...)
	}
	return append(b, "]}"...)
}

func allocs(n int) []drive.Call {
	calls := make([]drive.Call, n)
	for i := range calls {
		calls[i] = drive.Call{Op: traces.OpAlloc, Handle: i + 1, Size: 16}
	}
	return calls
}

// Item 3: a driver that answers each of a program's 9 calls with 16,384
// frees (each answer within its bound) is stopped when the program's
// answers pass 65,536 events: at call 4, holding no more.
func TestKillProgramEventsBound(t *testing.T) {
	d := startFunc(t, drive.Config{}, lineServer(hello2, func(k int, id int64) []byte {
		if k == 0 {
			return fmt.Appendf(nil, `{"id":%d,"events":[],"outcome":"done"}`, id)
		}
		return frees(id, 1<<14)
	}))
	res, err := d.Run(allocs(9))
	if err != nil {
		t.Fatal(err)
	}
	broke := d.Broken()
	if broke == nil || !strings.Contains(broke.Error(), "driver protocol: more than 65536 events in one program, at the answer to call 4") {
		t.Fatalf("the driver is not stopped at call 4 as over the program's bound: %v (failure %v)", broke, res.Failure)
	}
	if len(res.Trace) > 1<<16 || len(res.Outcomes) != 4 {
		t.Errorf("the harness holds %d events of %d answers, want 4 answers of at most 65536", len(res.Trace), len(res.Outcomes))
	}
}

// Item 4: a reset answered with events, or refused, is not the protocol,
// at once, whatever the driver does after it (here: answers the calls as
// the Go runtime does).
func TestKillResetAnswered(t *testing.T) {
	calls := []drive.Call{{Op: traces.OpScopeEnter}, {Op: traces.OpScopeExit}, {Op: traces.OpEnd}}
	for _, tc := range []struct {
		name, reset string // the answer to the reset, %d its id
		bad         bool
	}{
		{"done", `{"id":%d,"events":[],"outcome":"done"}`, false},
		{"with an event", `{"id":%d,"events":[{"op":"scope_enter"}],"outcome":"done"}`, true},
		{"with a free", `{"id":%d,"events":[{"op":"free","addr":"0x10"}],"outcome":"done"}`, true},
		{"refused", `{"id":%d,"events":[],"outcome":"refused","message":"no"}`, true},
		{"refused with a kind", `{"id":%d,"events":[],"outcome":"refused","message":"no","kinds":["misuse"]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := transcript(t, calls)
			d := startFunc(t, drive.Config{}, lineServer(hello2, func(k int, id int64) []byte {
				if k == 0 {
					return fmt.Appendf(nil, tc.reset, id)
				}
				return answers[k]
			}))
			res, err := d.Run(calls)
			if err != nil {
				t.Fatal(err)
			}
			f := res.Failure
			switch {
			case !tc.bad && f != nil:
				t.Fatalf("failure %v, want none", f)
			case tc.bad && (f == nil || f.What != string(drive.TroubleProtocol) || f.Call != 0 || !strings.Contains(f.Message, "the answer to the reset") ||
				!strings.Contains(f.Message, "has events or a refusal")):
				t.Fatalf("failure %+v, want a protocol failure: the answer to the reset has events or a refusal", f)
			}
		})
	}
}

// transcript returns the Go runtime's answers (impldriver's) to calls run
// as a driver's first program: the reset's, then each call's.
func transcript(t *testing.T, calls []drive.Call) [][]byte {
	t.Helper()
	var in bytes.Buffer
	fmt.Fprintf(&in, `{"id":1,"op":"reset"}`+"\n")
	for i := range calls {
		c := calls[i].AppendJSON(nil)
		fmt.Fprintf(&in, `{"id":%d,%s`+"\n", i+2, c[1:])
	}
	var out bytes.Buffer
	if err := impldriver.Serve(&in, &out, impl.Config{}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != len(calls)+2 {
		t.Fatalf("impldriver answered %d lines to %d calls and a reset", len(lines)-1, len(calls))
	}
	for i := range lines {
		lines[i] = slices.Clip(lines[i])
	}
	return lines[1:]
}

// Item 5, through a driver: a hello later than the start timeout, but
// within the call timeout, which is longer, starts the driver.
func TestKillSlowHello(t *testing.T) {
	serve := func(delay time.Duration) func(io.Reader, io.Writer) error {
		return func(stdin io.Reader, stdout io.Writer) error {
			time.Sleep(delay)
			return lineServer(hello2, func(int, int64) []byte { return nil })(stdin, stdout)
		}
	}
	d, err := drive.StartFunc(drive.Config{CallTimeout: 20 * time.Second, StartTimeout: 50 * time.Millisecond}, serve(300*time.Millisecond))
	if err != nil {
		t.Fatalf("a hello after 300ms, a start timeout of 50ms and a call timeout of 20s: %v", err)
	}
	d.Close()
	_, err = drive.StartFunc(drive.Config{CallTimeout: 50 * time.Millisecond, StartTimeout: 50 * time.Millisecond}, serve(5*time.Second))
	var tr *drive.Trouble
	if !errors.As(err, &tr) || tr.Kind != drive.TroubleStart || !strings.Contains(err.Error(), "no answer within 50ms while waiting for its hello") {
		t.Fatalf("a hello after 5s, both timeouts 50ms: %v, want a start trouble", err)
	}
}

// Item 7 and its class: a calls file's error names the line it is on,
// comments and blank lines counted, a line too long for the reader as
// much as one that is not a call.
func TestKillCallsFileErrorLine(t *testing.T) {
	long := strings.Repeat("x", 2<<20)
	if _, err := drive.ReadCalls(strings.NewReader(`{"op":"scope_enter"}` + "\n" + long + "\n")); err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Fatalf("a valid line 1, then a 2 MiB line 2: %v, want an error of line 2", err)
	}
	rng := rand.New(rand.NewPCG(29, 7))
	// %[1]d is a new handle for each line: a calls file gives a handle once.
	good := []string{`{"op":"scope_enter"}`, "# a comment", "", "   ", `{"op":"alloc","handle":%[1]d,"size":16}`}
	goodTensor := []string{`{"op":"leaf","handle":%[1]d,"shape":[1],"values":[1],"requires_grad":false}`, "# a comment", ""}
	line := func(forms []string, handle int) string {
		f := forms[rng.IntN(len(forms))]
		if !strings.Contains(f, "%[1]d") {
			return f + "\n"
		}
		return fmt.Sprintf(f, handle) + "\n"
	}
	for range 50 {
		n := rng.IntN(6)
		var b, bt strings.Builder
		for i := range n {
			b.WriteString(line(good, i+1))
			bt.WriteString(line(goodTensor, i+1))
		}
		bad := []string{long, `{"op":"nothing"}`, `{"op":"reset"}`, `{"op":"alloc","handle":1`}[rng.IntN(4)]
		want := fmt.Sprintf("line %d: ", n+1)
		if _, err := drive.ReadCalls(strings.NewReader(b.String() + bad + "\n" + good[0] + "\n")); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("ReadCalls, %d good lines, then %.40q: %v, want an error starting %q", n, bad, err, want)
		}
		if _, err := drive.ReadTensorCalls(strings.NewReader(bt.String() + bad + "\n")); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("ReadTensorCalls, %d good lines, then %.40q: %v, want an error starting %q", n, bad, err, want)
		}
	}
}

// diffDriverEnv makes this test binary the driver of item 8's B: a driver
// of layer 5 that refuses calls 0 and 1 of a program (where the Go engine
// does them: the two disagree at call 0), then exits at call 2.
const diffDriverEnv = "TLCHECK_TEST_KILL_DRIVER"

func init() {
	if os.Getenv(diffDriverEnv) == "" {
		return
	}
	hello := fmt.Sprintf(`{"protocol":%q,"version":1,"layers":[5],"source":"refuses, then exits"}`, drive.ProtocolName)
	in, out := bufio.NewReader(os.Stdin), os.Stdout
	fmt.Fprintln(out, hello)
	call := -1
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			os.Exit(0)
		}
		var id int64
		fmt.Sscanf(line, `{"id":%d`, &id)
		if strings.Contains(line, `"op":"reset"`) {
			call = -1
		}
		switch call {
		case -1:
			fmt.Fprintf(out, `{"id":%d,"events":[],"outcome":"done"}`+"\n", id)
		case 2:
			fmt.Fprintln(os.Stderr, "driver: exiting at call 2")
			os.Exit(3)
		default:
			fmt.Fprintf(out, `{"id":%d,"events":[],"outcome":"refused","message":"B refuses"}`+"\n", id)
		}
		call++
	}
}

// Item 8, through Diff: the drivers disagree at call 0, then B exits at
// call 2; the disagreement reported is call 0's.
func TestKillDiffEarliestOverCrash(t *testing.T) {
	a := newRunner(t, goAutograd(""))
	b := newRunner(t, drive.Config{Command: []string{os.Args[0]}, Env: append(os.Environ(), diffDriverEnv+"=1"), CallTimeout: hangTimeout})
	program := []drive.TensorCall{
		{Op: drive.TensorLeaf, Handle: 1, Shape: []int{1}, Values: []float64{1}},
		{Op: drive.TensorLeaf, Handle: 2, Shape: []int{1}, Values: []float64{2}},
		{Op: drive.TensorLeaf, Handle: 3, Shape: []int{1}, Values: []float64{3}},
		{Op: drive.TensorLeaf, Handle: 4, Shape: []int{1}, Values: []float64{4}},
		{Op: drive.TensorEnd},
	}
	d, _, err := drive.Diff(a, b, drive.DiffOptions{More: func(n int) bool { return n < 1 }, ShrinkRuns: 1,
		Generate: func(*rand.Rand) []drive.TensorCall { return program }})
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || d.Call != 0 || d.Field != "outcome" || !strings.HasPrefix(d.Report(), "the drivers disagree at call 0: outcome") {
		t.Fatalf("%v, want the outcome at call 0", d)
	}
}
