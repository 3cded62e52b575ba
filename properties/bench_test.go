package properties

import (
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// BenchmarkRun measures programs checked per second: each program runs on
// the correct runtime, every event through the model, states compared
// after every call (none fails, so none writes and replays its trace: see
// finish). Events/s counts what the runtime recorded.
func BenchmarkRun(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 11))
	progs := make([]Program, 256)
	for i := range progs {
		progs[i] = Generate(r)
	}
	events := 0
	i := 0
	for b.Loop() {
		res, _ := Run(progs[i%len(progs)], impl.Config{})
		events += len(res.Trace)
		i++
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(i)/sec, "programs/s")
	b.ReportMetric(float64(events)/sec, "events/s")
}
