package drive_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// shapes are the deep shapes one program's run reaches.
type shapes struct {
	count   uint64 // the highest count of an object
	records int    // the most records one scope held
	reuse   int    // the most objects one address was handed out to
	life    int    // the most events an object lived through
}

// shapesOf runs p on impl's runtime (which states its counts) and
// measures its trace.
func shapesOf(p flat.Program) shapes {
	var sh shapes
	var scopes []int
	born := map[traces.Addr]int{}
	handed := map[traces.Addr]int{}
	r, _ := properties.Run(p, impl.Config{})
	for i, ev := range r.Trace {
		if ev.HasCount {
			sh.count = max(sh.count, ev.Count)
		}
		switch ev.Op {
		case traces.OpScopeEnter:
			scopes = append(scopes, 0)
		case traces.OpScopeExit:
			if len(scopes) > 0 {
				scopes = scopes[:len(scopes)-1]
			}
		case traces.OpAlloc, traces.OpStructInit, traces.OpRegister:
			if n := len(scopes); n > 0 {
				scopes[n-1]++
				sh.records = max(sh.records, scopes[n-1])
			}
			if ev.Op != traces.OpRegister && ev.Addr != 0 {
				born[ev.Addr] = i
				handed[ev.Addr]++
				sh.reuse = max(sh.reuse, handed[ev.Addr])
			}
		case traces.OpFree:
			if b, ok := born[ev.Addr]; ok {
				sh.life = max(sh.life, i-b)
				delete(born, ev.Addr)
			}
		}
	}
	return sh
}

// TestGenerateReachesDeepShapes: within drivetest.Test's budget under -short
// (200 programs of seed 1), the default programs regularly take a count
// past 256, fill a scope past 8 records, hand one address out 10 times
// and keep an object alive through 300 events; and --steps programs are
// as long as asked.
func TestGenerateReachesDeepShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 0x746c636865636b))
	var count, records, reuse, life, steps int
	const programs = 200
	for range programs {
		p := drive.GenerateProgram(rng, 0)
		steps += len(p.Steps)
		sh := shapesOf(p)
		if sh.count > 256 {
			count++
		}
		if sh.records > 8 {
			records++
		}
		if sh.reuse >= 10 {
			reuse++
		}
		if sh.life >= 300 {
			life++
		}
	}
	t.Logf("of %d programs (%d steps on average): %d take a count past 256, %d a scope past 8 records, %d hand one address out 10 times, %d keep an object 300 events",
		programs, steps/programs, count, records, reuse, life)
	for what, n := range map[string]int{"a count past 256": count, "a scope past 8 records": records,
		"one address handed out 10 times": reuse, "an object alive 300 events": life} {
		if n < 5 {
			t.Errorf("%d of %d programs reach %s, want at least 5", n, programs, what)
		}
	}
	for _, want := range []int{300, 5000} {
		if got := len(drive.GenerateProgram(rng, want).Steps); got < want {
			t.Errorf("GenerateProgram(%d) made %d steps", want, got)
		}
	}
}
