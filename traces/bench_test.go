package traces

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// benchEvents is the size of the generated trace the benchmarks decode.
const benchEvents = 200_000

var benchTrace = sync.OnceValues(func() ([]byte, []byte) {
	var stream, doc bytes.Buffer
	h := Header{Effects: true, Source: "bench"}
	sw, dw := NewWriter(&stream, h), NewDocumentWriter(&doc, h)
	for _, ev := range mixedEvents(benchEvents) {
		if err := sw.Write(&ev); err != nil {
			panic(err)
		}
		if err := dw.Write(&ev); err != nil {
			panic(err)
		}
	}
	if err := sw.Close(); err != nil {
		panic(err)
	}
	if err := dw.Close(); err != nil {
		panic(err)
	}
	return stream.Bytes(), doc.Bytes()
})

// mixedEvents makes n events of every layer, with the mix of ops, sites and
// field sizes a runtime's trace has: mostly alloc, release, acquire and
// accesses, at a few dozen sites.
func mixedEvents(n int) []Event {
	sites := make([]string, 40)
	for i := range sites {
		sites[i] = "model/train.tl:" + strconv.Itoa(100+i)
	}
	evs := make([]Event, 0, n)
	addr := Addr(0x7f3a10000000)
	for i := 0; len(evs) < n; i++ {
		a := addr + Addr(i%512)*0x100
		site := sites[i%len(sites)]
		switch i % 16 {
		case 0:
			evs = append(evs, Event{Op: OpScopeEnter})
		case 1, 2:
			evs = append(evs, Event{Op: OpAlloc, Addr: a, Size: 256, Site: site})
		case 3:
			evs = append(evs, Event{Op: OpAcquire, Addr: a, Site: site})
		case 4, 5:
			evs = append(evs, Event{Op: OpRead, Addr: a + 8, Size: 8, HasSize: true, Var: "x", Site: site})
		case 6:
			evs = append(evs, Event{Op: OpWrite, Addr: a, Site: site, T: int64(i) * 1000})
		case 7:
			evs = append(evs, Event{Op: OpStructInit, Addr: a, Size: 48, Fields: []Addr{a + 0x100, 0, a + 0x200}, Site: site})
		case 8:
			evs = append(evs, Event{Op: OpRelease, Addr: a, Site: site})
		case 9:
			evs = append(evs, Event{Op: OpFree, Addr: a})
		case 10:
			evs = append(evs, Event{Op: OpMalloc, Addr: a, Size: 4096, Site: site, Thread: "1"})
		case 11:
			evs = append(evs, Event{Op: OpParamRegister, Name: "weights", Addr: a})
		case 12:
			evs = append(evs, Event{Op: OpFnEnter, Slots: 4})
		case 13:
			evs = append(evs, Event{Op: OpArenaGet, Slot: i % 4, Addr: a, Size: 1024, Var: "h"})
		case 14:
			evs = append(evs, Event{Op: OpPoolGet, Addr: a, Size: 512})
		case 15:
			evs = append(evs, Event{Op: OpScopeExit})
		}
	}
	return evs
}

// BenchmarkDecode decodes a generated trace of benchEvents mixed events from
// memory and reports events/s and allocs/event (allocs/op are per trace).
func BenchmarkDecode(b *testing.B) {
	stream, doc := benchTrace()
	for _, bc := range []struct {
		name string
		data []byte
	}{{"stream", stream}, {"document", doc}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			var ev Event
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(bc.data))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for ; ; n++ {
					if err := r.Next(&ev); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
				if n != benchEvents {
					b.Fatalf("decoded %d events, want %d", n, benchEvents)
				}
			}
			runtime.ReadMemStats(&after)
			events := float64(benchEvents) * float64(b.N)
			b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/events, "allocs/event")
		})
	}
}

// BenchmarkDecodeBaseline decodes the same stream with encoding/json into a
// struct of the same fields, the baseline BenchmarkDecode is measured
// against (run both in one process and compare events/s).
func BenchmarkDecodeBaseline(b *testing.B) {
	stream, _ := benchTrace()
	type event struct {
		Op      string          `json:"op"`
		Addr    json.RawMessage `json:"addr"`
		NewAddr json.RawMessage `json:"new_addr"`
		Size    *uint64         `json:"size"`
		Kind    string          `json:"kind"`
		Fields  []string        `json:"fields"`
		Name    string          `json:"name"`
		Slots   int             `json:"slots"`
		Slot    int             `json:"slot"`
		Var     string          `json:"var"`
		Space   string          `json:"space"`
		Site    string          `json:"site"`
		T       int64           `json:"t"`
		Thread  json.RawMessage `json:"thread"`
	}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		dec := json.NewDecoder(bytes.NewReader(stream))
		var h map[string]any
		if err := dec.Decode(&h); err != nil {
			b.Fatal(err)
		}
		n := 0
		for ; ; n++ {
			var ev event
			if err := dec.Decode(&ev); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
		if n != benchEvents {
			b.Fatalf("decoded %d events, want %d", n, benchEvents)
		}
	}
	b.ReportMetric(float64(benchEvents)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEncode writes the same events with AppendEvent.
func BenchmarkEncode(b *testing.B) {
	evs := mixedEvents(benchEvents)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		for i := range evs {
			buf = AppendEvent(buf[:0], &evs[i])
		}
	}
	b.ReportMetric(float64(benchEvents)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
