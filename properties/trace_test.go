package properties

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// TestEncodeTrace holds the round trip's encoder to the Writer: the same
// bytes for every run's trace, header included, pooled buffer or not.
func TestEncodeTrace(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for i := range 200 {
		res, _ := Run(Generate(r), impl.Config{Faults: []impl.Fault{impl.FaultArenaGrowFreesOld}})
		var want bytes.Buffer
		if err := writeTrace(&want, res.Header, res.Trace); err != nil {
			t.Fatal(err)
		}
		got := encodeTrace(res.Header, res.Trace)
		if !bytes.Equal(*got, want.Bytes()) {
			t.Fatalf("run %d: encodeTrace wrote\n%s\nthe Writer writes\n%s", i, *got, want.Bytes())
		}
		releaseTrace(got)
	}
	// An event the Writer refuses must not read back either.
	bad := encodeTrace(traces.Header{Format: traces.FormatName, Version: traces.Version}, []traces.Event{{Op: 200}})
	defer releaseTrace(bad)
	rd, err := traces.NewReader(bytes.NewReader(*bad))
	if err == nil {
		var ev traces.Event
		err = rd.Next(&ev)
	}
	if err == nil {
		t.Error("an event with an invalid op read back")
	}
}
