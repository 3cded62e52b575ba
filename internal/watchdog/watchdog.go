// Package watchdog notices concurrent code that has stopped making
// progress, most often a deadlock, and says where every goroutine stood.
//
// A Watchdog is petted by the code it watches (Pet) each time some work
// completes; when it has not been petted for its quiet time, it barks once
// with the stacks of all goroutines. Tests of concurrent code use Test, so
// that a deadlock fails them within seconds, showing who holds and who
// waits, rather than at go test's ten-minute timeout; a library that runs
// goroutines of its own (package lincheck) turns a bark into an error.
package watchdog

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

// Watchdog barks when Pet has not been called for its quiet time.
type Watchdog struct {
	quiet time.Duration
	mu    sync.Mutex
	last  time.Time
	stop  chan struct{}
	once  sync.Once
}

// Start returns a running watchdog that calls bark once, in a goroutine of
// its own, with every goroutine's stack (Stacks), when quiet has passed
// since Start or the last Pet. Stop ends it; a watchdog that has barked
// stays silent.
func Start(quiet time.Duration, bark func(stacks string)) *Watchdog {
	w := &Watchdog{quiet: quiet, last: time.Now(), stop: make(chan struct{})}
	go w.watch(bark)
	return w
}

func (w *Watchdog) watch(bark func(string)) {
	t := time.NewTimer(w.quiet)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		w.mu.Lock()
		left := w.quiet - time.Since(w.last)
		w.mu.Unlock()
		if left <= 0 {
			bark(Stacks())
			return
		}
		t.Reset(left)
	}
}

// Pet says the watched code made progress. It is safe for concurrent use
// and cheap enough to call once per operation.
func (w *Watchdog) Pet() {
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
}

// Stop ends the watchdog; it may be called more than once.
func (w *Watchdog) Stop() { w.once.Do(func() { close(w.stop) }) }

// Stacks returns the stacks of all goroutines, as runtime.Stack writes
// them.
func Stacks() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TB is the part of testing.TB that Test needs; *testing.T is one. (This
// package does not import testing, so that a program may use Start.)
type TB interface {
	Helper()
	Name() string
	Cleanup(func())
}

// Test starts a watchdog for t that stops when t ends. A bark writes the
// test's name, the quiet time and every goroutine's stack to standard
// error and panics: a test stuck in a deadlock cannot be failed any other
// way, since its own goroutine never returns, and the panic ends the test
// binary at once, which go test reports as a failure.
func Test(t TB, quiet time.Duration) *Watchdog {
	t.Helper()
	name := t.Name()
	w := Start(quiet, func(stacks string) {
		fmt.Fprintf(os.Stderr, "watchdog: %s made no progress for %v (a deadlock?); every goroutine's stack:\n\n%s\n", name, quiet, stacks)
		panic(fmt.Sprintf("watchdog: %s made no progress for %v", name, quiet))
	})
	t.Cleanup(w.Stop)
	return w
}
