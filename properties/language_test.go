package properties

import (
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// TestLanguagesSearchAsBefore: the harness draws a language's programs
// from the stream the language always used, and finds, from the same
// seed, the program the language's own search finds: the seeds saved in
// reports and issues keep their meaning.
func TestLanguagesSearchAsBefore(t *testing.T) {
	more := func(n int) bool { return n < 3000 }
	// The flat programs' stream, as it always was: seed, then "tlcheck".
	l := FlatLanguage(nil)
	if m := l.Missing(); len(m) > 0 {
		t.Errorf("FlatLanguage lacks %v", m)
	}
	if got, want := l.Generate(l.Rand(5), 0).String(), Generate(rand.New(rand.NewPCG(5, 0x746c636865636b))).String(); got != want {
		t.Errorf("FlatLanguage draws from another stream:\n%s\nwant\n%s", got, want)
	}
	// The autograd programs' stream, as it always was: seed, then seed
	// xor PCG's multiplier.
	a := AutogradLanguage(nil)
	if m := a.Missing(); len(m) > 0 {
		t.Fatalf("AutogradLanguage lacks %v", m)
	}
	if got, want := a.Generate(a.Rand(5), 0).String(), GenerateAutograd(rand.New(rand.NewPCG(5, 5^0x5851f42d4c957f2d))).String(); got != want {
		t.Errorf("AutogradLanguage draws from another stream:\n%s\nwant\n%s", got, want)
	}
	// And the search is the first failing program of that stream.
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineAutograd {
			continue
		}
		faults := []impl.Fault{fi.Name}
		p, f, n := harness.Search(AutogradLanguage(faults), 1, more)
		if f == nil {
			t.Fatalf("fault %s: no failure in %d programs", fi.Name, n)
		}
		r := a.Rand(1)
		for k := range n - 1 {
			if g := RunAutograd(GenerateAutograd(r), faults); g != nil {
				t.Fatalf("fault %s: program %d of the stream fails (%v), but the search went on to %d", fi.Name, k, g, n)
			}
		}
		if q := GenerateAutograd(r); q.String() != p.String() {
			t.Errorf("fault %s: the search returned\n%s\nnot program %d of the stream\n%s", fi.Name, p, n-1, q)
		}
		break // one is enough to show the stream is the same
	}
}

// BenchmarkSearchThroughHarness measures the correct runtime's programs
// per second as a bare loop of Run runs them and as the harness runs
// FlatLanguage's (Search): the harness's share of the search, measured in
// one run.
func BenchmarkSearchThroughHarness(b *testing.B) {
	l := FlatLanguage(nil)
	for _, bb := range []struct {
		name   string
		search func(more func(int) bool) int
	}{
		{"a bare loop of Run", func(more func(int) bool) int {
			r, n := rand.New(rand.NewPCG(1, 0x746c636865636b)), 0
			for more(n) {
				p := Generate(r)
				n++
				Run(p, impl.Config{})
			}
			return n
		}},
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
