package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFuzzExecStartTimeout: the wait for a driver's hello has a flag of
// its own, whose default fits importing PyTorch on a loaded machine, and
// a driver that does not say hello within it is refused with a message
// that names the flag and, with --against, the driver.
func TestFuzzExecStartTimeout(t *testing.T) {
	opts, err := parseFuzzExecArgs([]string{"--exec", "true"})
	if err != nil || opts.StartTimeout < time.Minute {
		t.Errorf("--start-timeout's default %v (%v): want at least a minute", opts.StartTimeout, err)
	}
	slow := "sh -c 'sleep 3'" // no hello within the start timeout
	hello := `sh -c 'echo "{\"protocol\":\"tlcheck-drive\",\"version\":1,\"layers\":[5]}"; cat >/dev/null'`
	fast := []string{"--start-timeout", "300ms", "--call-timeout", "100ms"}
	for _, tc := range []struct {
		args []string
		says []string
	}{
		{append([]string{"fuzz", "--exec", slow}, fast...), []string{"300ms (--start-timeout)", "its hello"}},
		{append([]string{"fuzz", "--exec", slow, "--against", hello}, fast...), []string{"driver A (--exec)", "300ms (--start-timeout)"}},
		{append([]string{"fuzz", "--exec", hello, "--against", slow}, fast...), []string{"driver B (--against)", "300ms (--start-timeout)"}},
		{append([]string{"fuzz", "--exec", "sh -c 'echo {}'", "--against", hello}, fast...), []string{"driver A (--exec)", "not a hello"}},
		{[]string{"fuzz", "--exec", "true", "--start-timeout", "0s"}, []string{"--start-timeout want positive"}},
	} {
		start := time.Now()
		code, out, errOut := tlcheck(false, tc.args...)
		if code != exitInput {
			t.Errorf("%q: exit %d, want 2\n%s%s", tc.args, code, out, errOut)
		}
		for _, s := range tc.says {
			if !strings.Contains(errOut, s) {
				t.Errorf("%q: stderr lacks %q:\n%s", tc.args, s, errOut)
			}
		}
		if took := time.Since(start); took > 2500*time.Millisecond {
			t.Errorf("%q took %v: the start timeout was not kept", tc.args, took)
		}
	}
}

// TestFuzzExecCallTimeoutNamed: a call timeout too short to write the
// program in is a timeout naming the flag, not the pipe's "write |1: i/o
// timeout".
func TestFuzzExecCallTimeoutNamed(t *testing.T) {
	hello := `sh -c 'echo "{\"protocol\":\"tlcheck-drive\",\"version\":1,\"layers\":[5]}"; sleep 5'`
	code, out, errOut := tlcheck(false, "fuzz", "--exec", hello, "--call-timeout", "1ns", "--time", "1s", "--out", t.TempDir())
	if code != exitViolation || !strings.Contains(out, "within 1ns (--call-timeout)") || strings.Contains(out+errOut, "i/o timeout") {
		t.Errorf("--call-timeout 1ns: exit %d, want 1 and a timeout naming the flag\n%s%s", code, out, errOut)
	}
}

// TestFuzzExecReplayEmpty: a calls file with no calls is not a program
// that passes (exit 0), but an unreadable input (exit 2).
func TestFuzzExecReplayEmpty(t *testing.T) {
	hello := `sh -c 'echo "{\"protocol\":\"tlcheck-drive\",\"version\":1,\"layers\":[2]}"; cat >/dev/null'`
	empty := filepath.Join(t.TempDir(), "empty.calls.jsonl")
	if err := os.WriteFile(empty, []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := tlcheck(false, "fuzz", "--exec", hello, "--replay", empty)
	if code != exitInput || !strings.Contains(errOut, "no calls") {
		t.Errorf("--replay of an empty calls file: exit %d, want 2 saying no calls\n%s%s", code, out, errOut)
	}
}
