package drive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// StartFunc is Start for a driver that is a function of the test's own
// process: serve reads the calls on stdin and writes the hello and the
// answers on stdout, as a driver process does, and returning is the
// process exiting (a non-nil error: a failure status). The Driver is the
// one Start returns, over pipes of its own, so that its reading, bounds,
// checks and troubles are the ones a driver process meets; only the
// process is missing. The harness closing stdin (at Close, or to kill it)
// ends the "process": a serve that has not returned a moment later has
// its stdout closed under it, as a kill would. The tests of package
// drive_test use it to serve answers they make or mutate, thousands a
// second.
func StartFunc(cfg Config, serve func(stdin io.Reader, stdout io.Writer) error) (*Driver, error) {
	cfg = cfg.withDefaults()
	d := &Driver{cfg: cfg, cmd: &exec.Cmd{}, stderr: newRing(cfg.StderrKeep), exited: make(chan struct{})}
	d.check.rule = cfg.rule
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	d.stdin = stdinW
	d.out = lineReader{f: stdoutR, max: cfg.MaxLine, buf: make([]byte, 64<<10)}
	var once sync.Once
	end := func(err error) {
		once.Do(func() {
			stdoutW.Close()
			d.waitErr = err
			close(d.exited)
		})
	}
	in := &relay{ch: make(chan []byte, 1<<12)}
	served := make(chan struct{})
	go func() {
		err := serve(in, stdoutW)
		close(served)
		if err != nil {
			err = fmt.Errorf("serve: %w", err)
		}
		end(err)
	}()
	go func() {
		// Stdin is read ahead of serve, so that its end is seen at once,
		// however busy serve is.
		buf := make([]byte, 64<<10)
		for {
			n, err := stdinR.Read(buf)
			if n > 0 {
				in.ch <- bytes.Clone(buf[:n])
			}
			if err != nil {
				break
			}
		}
		close(in.ch)
		stdinR.Close()
		select {
		case <-served:
		case <-time.After(200 * time.Millisecond):
			end(errors.New("killed"))
		}
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

// relay is StartFunc's stdin for serve: what the harness wrote, in the
// chunks it was read in.
type relay struct {
	ch  chan []byte
	cur []byte
}

func (r *relay) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		b, ok := <-r.ch
		if !ok {
			return 0, io.EOF
		}
		r.cur = b
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// TfjsConfig is the tfjs driver's Config, for the tests of package
// drive_test (drivetest's over the tfjs driver); it skips without node or
// the driver's modules.
var TfjsConfig = tfjsConfig
