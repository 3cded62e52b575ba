package drive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tlcheck/tlcheck/traces"
)

// Config says how to start and talk to a driver.
type Config struct {
	// Command is the driver's program and its arguments.
	Command []string
	// Env, where set, is the driver's environment (os.Environ() else).
	Env []string
	// CallTimeout bounds the wait for each answer: a driver that takes
	// longer has hung. Default 2s.
	CallTimeout time.Duration
	// StartTimeout bounds the wait for the hello, which may come after a
	// slow start (a JIT, a large binary, importing PyTorch on a loaded
	// machine). Default 10s, and never less than CallTimeout.
	StartTimeout time.Duration
	// CallTimeoutFlag and StartTimeoutFlag, where set, name what sets
	// the two timeouts for a person (a command's flags, "--call-timeout"),
	// so that a timeout's message says what to raise.
	CallTimeoutFlag, StartTimeoutFlag string
	// MaxLine bounds an answer's length; a longer line is not the
	// protocol. Default 1 MiB.
	MaxLine int
	// StderrKeep is how much of the driver's stderr is kept, the last
	// bytes written. Default 64 KiB.
	StderrKeep int

	rule modelRule // tests only: a wrong rule of the model (autograd_check.go)
}

func (c Config) withDefaults() Config {
	if c.CallTimeout <= 0 {
		c.CallTimeout = 2 * time.Second
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 10 * time.Second
	}
	c.StartTimeout = max(c.StartTimeout, c.CallTimeout)
	if c.MaxLine <= 0 {
		c.MaxLine = 1 << 20
	}
	if c.StderrKeep <= 0 {
		c.StderrKeep = 64 << 10
	}
	return c
}

// Driver is a running driver process.
type Driver struct {
	cfg     Config
	cmd     *exec.Cmd
	stdin   *os.File
	out     lineReader
	stderr  *ring
	hello   Hello
	offers  map[traces.Op]bool
	seq     int64  // ids sent so far
	wbuf    []byte // the batch being written
	parse   answerParser
	broken  *Trouble // sticky: why the process cannot be used any more
	last    *Result  // the last program's run
	check   checker
	exited  chan struct{}
	waitErr error
}

// TroubleKind says how a driver failed as a process, rather than as a
// runtime: these are findings too, as a crash or a timeout is for a fuzzer.
type TroubleKind string

const (
	TroubleExit     TroubleKind = "exit"     // the driver exited, or closed its stdout
	TroubleTimeout  TroubleKind = "timeout"  // no answer within the call timeout
	TroubleProtocol TroubleKind = "protocol" // it wrote something that is not the protocol
	TroubleStart    TroubleKind = "start"    // it could not be started, or its hello was wrong
)

// Trouble is a driver failing as a process: what happened, and the last
// of its stderr.
type Trouble struct {
	Kind   TroubleKind
	What   string
	Stderr string // the last bytes the driver wrote to stderr

	unstarted bool // no process ran: there is no stderr to show
}

// Error reads "driver timeout: no answer within 2s ...", then the last stderr.
func (t *Trouble) Error() string {
	if t.unstarted {
		return fmt.Sprintf("driver %s: %s", t.Kind, t.What) // no process, no stderr
	}
	return fmt.Sprintf("driver %s: %s\n%s", t.Kind, t.What, StderrText(t.Stderr))
}

// StderrText writes a driver's last stderr for a report, saying so when
// it is empty: a crash with nothing on stderr is worth knowing too.
func StderrText(stderr string) string {
	if stderr == "" {
		return "--- the driver wrote nothing to its stderr ---"
	}
	return "--- the driver's last stderr ---\n" + strings.TrimRight(stderr, "\n")
}

// Start starts the driver and reads its hello. A driver that cannot be
// started, or whose first line is not a hello this package speaks, is a
// *Trouble of kind TroubleStart.
func Start(cfg Config) (*Driver, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Command) == 0 {
		return nil, errors.New("drive: no driver command")
	}
	d := &Driver{cfg: cfg, stderr: newRing(cfg.StderrKeep), exited: make(chan struct{})}
	d.check.rule = cfg.rule
	d.cmd = exec.Command(cfg.Command[0], cfg.Command[1:]...)
	d.cmd.Env = cfg.Env
	d.cmd.Stderr = d.stderr
	d.cmd.WaitDelay = time.Second // a grandchild holding stderr open does not hold Wait
	setProcessGroup(d.cmd)
	// Pipes of our own, not the Cmd's: Wait closes a StdoutPipe when the
	// process exits, and the answers it wrote before it died would be lost.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("drive: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, fmt.Errorf("drive: %w", err)
	}
	d.cmd.Stdin, d.cmd.Stdout = stdinR, stdoutW
	err = d.cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, &Trouble{Kind: TroubleStart, What: fmt.Sprintf("starting %q: %v", cfg.Command, err), unstarted: true}
	}
	d.stdin = stdinW
	d.out = lineReader{f: stdoutR, max: cfg.MaxLine, buf: make([]byte, 64<<10)}
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.exited)
	}()
	line, t := d.readLineWithin(cfg.StartTimeout, cfg.StartTimeoutFlag, func() string { return "its hello" })
	if t != nil {
		t.Kind = TroubleStart
		d.kill()
		return nil, t
	}
	if d.hello, err = parseHello(line); err != nil {
		d.kill()
		return nil, d.trouble(TroubleStart, fmt.Sprintf("its first line %s is not a hello: %v", clip(line), err))
	}
	d.offers = d.hello.offers()
	return d, nil
}

// Hello returns the driver's hello.
func (d *Driver) Hello() Hello { return d.hello }

// Stderr returns the last of what the driver wrote to its stderr.
func (d *Driver) Stderr() string { return d.stderr.String() }

// Close ends the driver: it closes its stdin, which a driver answers by
// exiting, and kills it if it has not within the call timeout. A driver
// that wrote anything after its last answer, exited with a failure, did
// not exit, or left a process of its own holding its stdout open, is
// reported as a *Trouble saying which.
func (d *Driver) Close() error {
	if d.broken != nil {
		d.kill()
		return nil // already reported
	}
	d.stdin.Close()
	wait := d.cfg.CallTimeout
	line, err := d.out.line(wait)
	switch {
	case err == nil:
		d.kill()
		return d.trouble(TroubleProtocol, fmt.Sprintf("it wrote %s after its last answer, at the end of its input", clip(line)))
	case errors.Is(err, os.ErrDeadlineExceeded):
		select {
		case <-d.exited:
			d.kill()
			return d.trouble(TroubleTimeout, fmt.Sprintf("it exited (%s) at the end of its input, but its stdout stayed open %v%s after: a process it started holds it (give a child another stdout, or end it first)",
				exitText(d.waitErr), wait, flagNote(d.cfg.CallTimeoutFlag)))
		default:
			d.kill()
			return d.trouble(TroubleTimeout, fmt.Sprintf("it did not exit within %v%s of the end of its input: a hang at the end", wait, flagNote(d.cfg.CallTimeoutFlag)))
		}
	case !errors.Is(err, io.EOF):
		d.kill()
		return d.trouble(TroubleExit, fmt.Sprintf("reading its stdout at the end of its input: %v", err))
	case len(line) > 0:
		d.kill()
		return d.trouble(TroubleProtocol, fmt.Sprintf("it wrote %s, an unfinished line, after its last answer", clip(line)))
	}
	select { // EOF: what a driver does at the end
	case <-d.exited:
	case <-time.After(wait):
		d.kill()
		return d.trouble(TroubleTimeout, fmt.Sprintf("it closed its stdout at the end of its input but did not exit within %v%s", wait, flagNote(d.cfg.CallTimeoutFlag)))
	}
	d.out.f.Close()
	if d.waitErr != nil {
		return d.trouble(TroubleExit, fmt.Sprintf("it exited (%s) at the end of its input; a driver exits 0 there", exitText(d.waitErr)))
	}
	return nil
}

// exitText writes a process's exit for a message.
func exitText(waitErr error) string {
	switch {
	case waitErr == nil:
		return "status 0"
	case errors.Is(waitErr, exec.ErrWaitDelay):
		return "status 0, with its stderr held open by a process it started"
	}
	return waitErr.Error()
}

// kill ends the process group and waits for it.
func (d *Driver) kill() {
	d.stdin.Close()
	killProcessGroup(d.cmd)
	select {
	case <-d.exited:
	case <-time.After(5 * time.Second):
	}
	d.out.f.Close()
}

// trouble makes a Trouble of kind with the driver's last stderr, marks
// the driver broken, and returns it.
func (d *Driver) trouble(kind TroubleKind, what string) *Trouble {
	t := &Trouble{Kind: kind, What: what, Stderr: d.stderr.settled()}
	d.broken = t
	return t
}

// readLine reads the next line of the driver's stdout within the call
// timeout. On EOF it waits a moment for the exit status, for the message.
func (d *Driver) readLine(what func() string) ([]byte, *Trouble) {
	return d.readLineWithin(d.cfg.CallTimeout, d.cfg.CallTimeoutFlag, what)
}

// readLineWithin reads the next line within timeout, which flag (if
// set) names for the message.
func (d *Driver) readLineWithin(timeout time.Duration, flag string, what func() string) ([]byte, *Trouble) {
	line, err := d.out.line(timeout)
	if err == nil {
		return line, nil
	}
	waitingFor := what()
	switch {
	case err == nil:
		return line, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		d.kill()
		return nil, d.trouble(TroubleTimeout, fmt.Sprintf("no answer within %v%s while waiting for %s", timeout, flagNote(flag), waitingFor))
	case errors.Is(err, errLineTooLong):
		d.kill()
		return nil, d.trouble(TroubleProtocol, fmt.Sprintf("a line longer than %d bytes while waiting for %s", d.cfg.MaxLine, waitingFor))
	case errors.Is(err, io.EOF):
		status := "closed its stdout"
		select {
		case <-d.exited:
			status = "exited"
			if d.waitErr != nil {
				status = "exited: " + d.waitErr.Error()
			}
		case <-time.After(d.cfg.CallTimeout):
			d.kill()
		}
		if len(line) > 0 {
			status += fmt.Sprintf(", its last line %s unfinished", clip(line))
		}
		return nil, d.trouble(TroubleExit, fmt.Sprintf("%s while tlcheck waited for %s", status, waitingFor))
	}
	d.kill()
	return nil, d.trouble(TroubleExit, fmt.Sprintf("reading its stdout while waiting for %s: %v", waitingFor, err))
}

// flagNote names what sets a timeout, for its message: " (--call-timeout)".
func flagNote(flag string) string {
	if flag == "" {
		return ""
	}
	return " (" + flag + ")"
}

// clip quotes a line for a message, cut to 200 bytes.
func clip(line []byte) string {
	if len(line) > 200 {
		return fmt.Sprintf("%q... (%d bytes)", line[:200], len(line))
	}
	return fmt.Sprintf("%q", line)
}

var errLineTooLong = errors.New("line too long")

// lineReader reads lines from a pipe with a deadline per line and a bound
// on a line's length, so that no driver can make the harness wait for
// ever or hold an unbounded line.
type lineReader struct {
	f    *os.File
	buf  []byte
	r, w int
	max  int
}

// line returns the next line, without its newline, valid until the next
// call; at EOF it returns what was left with io.EOF.
func (lr *lineReader) line(timeout time.Duration) ([]byte, error) {
	scanned := 0
	deadline := false
	for {
		if i := bytes.IndexByte(lr.buf[lr.r+scanned:lr.w], '\n'); i >= 0 {
			if scanned+i > lr.max { // the newline came with the bytes over the bound
				return nil, errLineTooLong
			}
			line := lr.buf[lr.r : lr.r+scanned+i]
			lr.r += scanned + i + 1
			return line, nil
		}
		scanned = lr.w - lr.r
		if scanned > lr.max {
			return nil, errLineTooLong
		}
		if lr.r > 0 {
			copy(lr.buf, lr.buf[lr.r:lr.w])
			lr.w -= lr.r
			lr.r = 0
		}
		if lr.w == len(lr.buf) {
			lr.buf = append(lr.buf, make([]byte, len(lr.buf))...)
		}
		if !deadline {
			if err := lr.f.SetReadDeadline(time.Now().Add(timeout)); err != nil {
				return nil, err
			}
			deadline = true
		}
		n, err := lr.f.Read(lr.buf[lr.w:])
		lr.w += n
		if err != nil && n == 0 {
			rest := lr.buf[lr.r:lr.w]
			lr.r = lr.w
			return rest, err
		}
	}
}

// ring keeps the last n bytes written to it, and counts the rest: a
// driver's stderr, however much it writes, costs n bytes.
type ring struct {
	mu    sync.Mutex
	buf   []byte
	next  int
	full  bool
	total int64 // bytes written, kept or not
}

func newRing(n int) *ring { return &ring{buf: make([]byte, n)} }

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	r.total += int64(n)
	if len(p) > len(r.buf) {
		p = p[len(p)-len(r.buf):]
	}
	for len(p) > 0 {
		c := copy(r.buf[r.next:], p)
		p = p[c:]
		r.next += c
		if r.next == len(r.buf) {
			r.next, r.full = 0, true
		}
	}
	return n, nil
}

// String returns what is kept, with a note of what was dropped.
func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return string(r.buf[:r.next])
	}
	kept := string(r.buf[r.next:]) + string(r.buf[:r.next])
	if dropped := r.total - int64(len(r.buf)); dropped > 0 { // full to the byte is not yet dropping
		return fmt.Sprintf("[%d earlier bytes dropped]\n", dropped) + kept
	}
	return kept
}

// settled returns String once the ring has taken nothing new for
// stderrQuiet (at most stderrSettle in all). The driver's stderr reaches
// the ring through a goroutine of os/exec's, which on a loaded machine
// can lag behind the answers read from stdout: a line the driver wrote
// before its answer would be missing from the finding that answer made.
func (r *ring) settled() string {
	deadline := time.Now().Add(stderrSettle)
	for seen := r.written(); time.Now().Before(deadline); {
		time.Sleep(stderrQuiet)
		now := r.written()
		if now == seen {
			break
		}
		seen = now
	}
	return r.String()
}

// The quiet time and the bound of ring.settled.
const (
	stderrQuiet  = 20 * time.Millisecond
	stderrSettle = 250 * time.Millisecond
)

func (r *ring) written() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Kept returns how many bytes the ring holds: never more than its size.
func (r *ring) Kept() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.full {
		return len(r.buf)
	}
	return r.next
}
