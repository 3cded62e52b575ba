package watchdog_test

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/internal/watchdog"
)

// deadlock makes two goroutines take two locks in opposite orders, each
// holding one when it asks for the other, and never returns.
func deadlock() {
	var a, b sync.Mutex
	var both sync.WaitGroup
	both.Add(2)
	var done sync.WaitGroup
	done.Add(2)
	go lockInOrder(&a, &b, &both, &done)
	go lockInOrder(&b, &a, &both, &done)
	done.Wait()
}

func lockInOrder(first, second *sync.Mutex, both, done *sync.WaitGroup) {
	defer done.Done()
	first.Lock()
	both.Done()
	both.Wait() // each holds its first lock now
	second.Lock()
}

func TestBarksWithTheStacks(t *testing.T) {
	barked := make(chan string, 1)
	start := time.Now()
	w := watchdog.Start(50*time.Millisecond, func(stacks string) { barked <- stacks })
	defer w.Stop()
	go deadlock()
	select {
	case stacks := <-barked:
		if !strings.Contains(stacks, "watchdog_test.lockInOrder") {
			t.Errorf("the stacks do not show the deadlocked goroutines:\n%s", stacks)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("barked after %v, before its quiet time", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no bark")
	}
}

func TestQuietWhilePetted(t *testing.T) {
	barked := make(chan string, 1)
	w := watchdog.Start(100*time.Millisecond, func(stacks string) { barked <- stacks })
	for range 30 { // 300 ms of work, petted every 10 ms
		time.Sleep(10 * time.Millisecond)
		w.Pet()
	}
	w.Stop()
	w.Stop()
	select {
	case <-barked:
		t.Fatal("barked though petted")
	case <-time.After(150 * time.Millisecond):
	}
}

// TestTestEndsTheBinary runs a deadlocked test in a child process: the
// watchdog must end it within seconds, exit status not 0, with the stacks
// of the goroutines on standard error.
func TestTestEndsTheBinary(t *testing.T) {
	if os.Getenv("WATCHDOG_CHILD") == "1" {
		watchdog.Test(t, 200*time.Millisecond)
		deadlock()
		return
	}
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTestEndsTheBinary$", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), "WATCHDOG_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the deadlocked test passed:\n%s", out)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("it took %v", d)
	}
	for _, want := range []string{"watchdog: TestTestEndsTheBinary made no progress for 200ms", "watchdog_test.lockInOrder", "panic: watchdog"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
