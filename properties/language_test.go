package properties

import (
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// TestLanguagesSearchAsBefore: the harness, searching a language of this
// package, finds the program the language's own search finds from the
// same seed, after as many programs, and its failure is the same: the
// seeds saved in reports and issues keep their meaning.
func TestLanguagesSearchAsBefore(t *testing.T) {
	more := func(n int) bool { return n < 3000 }
	for _, fault := range []impl.Fault{"unregister-releases", "release-ignores-zero"} {
		faults := []impl.Fault{fault}
		l := FlatLanguage(faults)
		if m := l.Missing(); len(m) > 0 {
			t.Fatalf("FlatLanguage lacks %v", m)
		}
		p, f, n := harness.Search(l, 1, more)
		q, g, m := Search(impl.Config{Faults: faults}, 1, more)
		if f == nil || g == nil || n != m || p.String() != q.String() || f.Detail.(*Failure).Error() != g.Error() {
			t.Errorf("fault %s: the harness found %v after %d, Search %v after %d", fault, f, n, g, m)
		}
		if f == nil {
			continue
		}
		small, sf := harness.Shrink(l, p, f)
		want, wf := Shrink(q, impl.Config{Faults: faults})
		if small.String() != want.String() || sf.Events != wf.Events() || sf.Broke() != brokenNames(wf) {
			t.Errorf("fault %s: shrunk to %d events (%s), Shrink to %d (%s)", fault, sf.Events, sf.Broke(), wf.Events(), brokenNames(wf))
		}
	}
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineAutograd {
			continue
		}
		faults := []impl.Fault{fi.Name}
		l := AutogradLanguage(faults)
		if m := l.Missing(); len(m) > 0 {
			t.Fatalf("AutogradLanguage lacks %v", m)
		}
		p, f, n := harness.Search(l, 1, more)
		q, g, m := SearchAutograd(faults, 1, more)
		if (f == nil) != (g == nil) || n != m || p.String() != q.String() {
			t.Errorf("fault %s: the harness found %v after %d, SearchAutograd %v after %d", fi.Name, f, n, g, m)
		}
		break // one is enough to show the stream is the same
	}
}

// brokenNames is Failure's properties, the first first, as the harness
// names them.
func brokenNames(f *Failure) string { return f.harness().Broke() }

// BenchmarkSearchThroughHarness measures the correct runtime's programs
// per second as Search runs them and as the harness runs FlatLanguage's:
// the harness's share of the search, measured in one run.
func BenchmarkSearchThroughHarness(b *testing.B) {
	l := FlatLanguage(nil)
	for _, bb := range []struct {
		name   string
		search func(more func(int) bool) int
	}{
		{"Search", func(more func(int) bool) int { _, _, n := Search(impl.Config{}, 1, more); return n }},
		{"harness.Search", func(more func(int) bool) int { _, _, n := harness.Search(l, 1, more); return n }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				n += bb.search(func(n int) bool { return n < 200 })
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "programs/s")
		})
	}
}
