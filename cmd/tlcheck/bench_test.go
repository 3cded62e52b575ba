package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// benchEvents is the size of the benchmark trace: large enough that the
// model's steady state dominates, small enough to build in a moment.
const benchEvents = 200_000

// genTrace writes a clean JSON Lines trace of about n events that touches
// all four layers the way a training loop does: per step, a scope of
// tensors and a struct with reference counting and a parameter taking one
// tensor, a function frame with arena slots shared by variables, a pool
// block of device memory, and a raw heap block that grows by realloc.
// Addresses are reused across steps, as a real allocator reuses them.
func genTrace(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"format":"tlcheck-trace","version":1,"source":"tlcheck benchmark"}` + "\n")
	ev := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	const (
		objBase   = 0x100000 // managed objects: 96 rotating 4 KiB slots
		objSlots  = 96
		heapBase  = 0x400000 // raw blocks
		arenaBase = 0x800000 // arena buffers
		segment   = 0xd0000000
		params    = 8
	)
	obj := func(k int) string { return "0x" + strconv.FormatInt(int64(objBase+(k%objSlots)*0x1000), 16) }
	ev(`{"op":"dev_malloc","addr":"0x%x","size":1048576,"site":"init.tl:1"}`, segment)
	events := 1
	for step := 0; events+29 <= n-params-2; step++ {
		a, bb, s := obj(3*step), obj(3*step+1), obj(3*step+2)
		t := 1000 * step
		ev(`{"op":"scope_enter","t":%d}`, t)
		ev(`{"op":"alloc","addr":"%s","size":256,"site":"model.tl:12","t":%d}`, a, t+1)
		ev(`{"op":"alloc","addr":"%s","size":512,"kind":"tensor","site":"model.tl:13","t":%d}`, bb, t+2)
		ev(`{"op":"write","addr":"%s","size":256}`, a)
		ev(`{"op":"read","addr":"%s","size":8}`, bb)
		ev(`{"op":"struct_init","addr":"%s","size":16,"fields":["%s","%s"],"site":"model.tl:14"}`, s, a, bb)
		ev(`{"op":"acquire","addr":"%s"}`, a)
		ev(`{"op":"read","addr":"%s","size":256}`, a)
		ev(`{"op":"release","addr":"%s","site":"model.tl:15"}`, a)
		ev(`{"op":"param_register","name":"w%d","addr":"%s","site":"model.tl:16"}`, step%params, a)
		ev(`{"op":"unregister","addr":"%s"}`, bb)
		ev(`{"op":"register","addr":"%s"}`, bb)
		ev(`{"op":"scope_exit","t":%d}`, t+3)

		arena := arenaBase + (step%4)*0x10000
		ev(`{"op":"fn_enter","slots":3,"site":"layer.tl:3"}`)
		ev(`{"op":"arena_get","slot":0,"addr":"0x%x","size":512,"var":"x"}`, arena)
		ev(`{"op":"write","addr":"0x%x","size":512,"var":"x"}`, arena)
		ev(`{"op":"arena_get","slot":1,"addr":"0x%x","size":512,"var":"y"}`, arena+0x1000)
		ev(`{"op":"read","addr":"0x%x","size":512,"var":"x"}`, arena)
		ev(`{"op":"arena_get","slot":0,"addr":"0x%x","size":512,"var":"z"}`, arena)
		ev(`{"op":"read","addr":"0x%x","size":64,"var":"z"}`, arena)
		ev(`{"op":"fn_exit"}`)

		blk := segment + (step%64)*0x1000
		ev(`{"op":"pool_get","addr":"0x%x","size":256,"site":"kernel.tl:7"}`, blk)
		ev(`{"op":"write","addr":"0x%x","size":256,"space":"device"}`, blk)
		ev(`{"op":"pool_put","addr":"0x%x"}`, blk)

		m := heapBase + (step%32)*0x1000
		ev(`{"op":"malloc","addr":"0x%x","size":64,"site":"io.c:40","thread":1}`, m)
		ev(`{"op":"write","addr":"0x%x","size":64}`, m)
		ev(`{"op":"realloc","addr":"0x%x","new_addr":"0x%x","size":128,"site":"io.c:41"}`, m, m+0x800)
		ev(`{"op":"read","addr":"0x%x","size":128}`, m+0x800)
		ev(`{"op":"free","addr":"0x%x","site":"io.c:42"}`, m+0x800)
		events += 29
	}
	for p := range params {
		ev(`{"op":"param_release","name":"w%d"}`, p)
	}
	ev(`{"op":"dev_free","addr":"0x%x"}`, segment)
	ev(`{"op":"end"}`)
	return b.Bytes()
}

// decodeAll reads every event of data and returns how many there were.
func decodeAll(data []byte) (int, error) {
	r, err := traces.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	var ev traces.Event
	n := 0
	for {
		switch err := r.Next(&ev); err {
		case nil:
			n++
		case io.EOF:
			return n, nil
		default:
			return n, err
		}
	}
}

// TestBenchTraceClean keeps the benchmark honest: the trace it replays is
// valid, of the intended size, and clean, so replay measures the model's
// normal path rather than the making of reports.
func TestBenchTraceClean(t *testing.T) {
	data := genTrace(20_000)
	n, err := decodeAll(data)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := model.Replay(mustReader(t, data))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events != n || n < 19_900 || n > 20_000 {
		t.Errorf("replayed %d events, decoded %d, want about 20000 of both", rep.Events, n)
	}
	if len(rep.Violations) != 0 || !rep.Complete || rep.Leaked.Objects != 0 {
		t.Errorf("benchmark trace not clean: %d violations (first %+v), complete %v, leaked %+v",
			len(rep.Violations), first(rep.Violations), rep.Complete, rep.Leaked)
	}
}

func mustReader(t testing.TB, data []byte) *traces.Reader {
	t.Helper()
	r, err := traces.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func first(vs []traces.Violation) any {
	if len(vs) == 0 {
		return nil
	}
	return vs[0]
}

// BenchmarkJSONL measures, in one run, what replaying a JSON Lines trace
// costs against merely decoding the same bytes: each iteration decodes the
// trace, then decodes and replays it, timing both, so that both halves see
// the same machine (a busy neighbour slows both alike). It reports
// events/s for each and their ratio, replay/decode: decoding and checking
// on one goroutine, the whole CPU cost. It also times replay as the
// command runs it, reading on a goroutine of its own ahead of the model
// (prefetch), and reports that wall time over decoding alone as
// command/decode (the brief asks for at most 1.5x).
func BenchmarkJSONL(b *testing.B) {
	data := genTrace(benchEvents)
	n, err := decodeAll(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(3 * int64(len(data)))
	var decode, replay, command time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := decodeAll(data); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		rep, err := model.Replay(mustReader(b, data))
		checkClean(b, rep, err)
		piped := time.Now()
		in, err := input.Open("-", input.Options{Format: input.Trace, Stdin: bytes.NewReader(data)})
		if err != nil {
			b.Fatal(err)
		}
		rep, err = model.Replay(in)
		in.Close()
		checkClean(b, rep, err)
		decode += mid.Sub(start)
		replay += piped.Sub(mid)
		command += time.Since(piped)
	}
	events := float64(n) * float64(b.N)
	b.ReportMetric(events/decode.Seconds(), "decode-events/s")
	b.ReportMetric(events/replay.Seconds(), "replay-events/s")
	b.ReportMetric(replay.Seconds()/decode.Seconds(), "replay/decode")
	b.ReportMetric(command.Seconds()/decode.Seconds(), "command/decode")
}

func checkClean(b *testing.B, rep traces.Report, err error) {
	b.Helper()
	if err != nil || len(rep.Violations) != 0 {
		b.Fatalf("replay: %v, %d violations", err, len(rep.Violations))
	}
}
