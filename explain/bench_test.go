package explain_test

import (
	"bytes"
	"testing"

	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// BenchmarkWhatIf measures a what-if replay: the snapshot's entries
// replayed through the caching allocator once for each of five modelled
// settings (DefaultSettings), reading excluded. It reports entries
// replayed per second over all settings.
func BenchmarkWhatIf(b *testing.B) {
	s, err := snapgen.Generate(snapgen.Config{Loop: snapgen.KeepLoss, Steps: 200, Layers: 8})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		b.Fatal(err)
	}
	pickle := buf.Bytes()
	settings := 0
	for _, st := range explain.DefaultSettings() {
		if !st.ExpandableSegments && st.RoundupPower2Divisions == 0 && st.GarbageCollectionThreshold == 0 {
			settings++
		}
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		r, err := torchsnap.NewReader(bytes.NewReader(pickle))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := explain.Explain(r, explain.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(s.Entries)*settings*b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(len(s.Entries)), "entries")
}
