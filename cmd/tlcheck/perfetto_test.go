package main

import (
	"bufio"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// What the Perfetto timeline holds, against the model, is export's to
// test (export/perfetto_test.go); here, that the command streams it.

// TestExportPerfettoStreams feeds a long trace through a pipe and checks
// that the export comes out while the trace is still coming in: it is
// written as the events are replayed, not held until the end.
func TestExportPerfettoStreams(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close() // on a failure too, so that the export ends
	outR, outW := io.Pipe()
	e := &env{stdin: pr, stdout: outW, stderr: io.Discard}
	done := make(chan int)
	go func() {
		code := run(e, []string{"export", "--format", "perfetto", "-"})
		outW.Close()
		done <- code
	}()
	// Read the output as it comes, counting its lines.
	var lines atomic.Int64
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines.Add(1)
		}
	}()
	w := bufio.NewWriter(pw)
	fmt.Fprintln(w, `{"format":"tlcheck-trace","version":1}`)
	const events = 200_000
	for i := range events / 2 {
		fmt.Fprintf(w, "{\"op\":\"malloc\",\"addr\":%d,\"size\":8}\n{\"op\":\"free\",\"addr\":%d}\n", 16+i%64*16, 16+i%64*16)
	}
	w.Flush()
	// The whole trace has been read (the pipe holds nothing), but it has
	// not ended: most of the export must be out already (4 lines an event
	// pair: b, C, e, C).
	deadline := time.Now().Add(60 * time.Second)
	for lines.Load() < events {
		select {
		case <-scanned:
			t.Fatal("the export ended before the trace did")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d lines out after the trace's %d events went in", lines.Load(), events)
		}
		time.Sleep(10 * time.Millisecond)
	}
	pw.Close()
	if code := <-done; code != exitClean {
		t.Errorf("exit %d", code)
	}
	<-scanned
}
