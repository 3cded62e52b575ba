package hunt

import (
	"bytes"
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
)

// long hunts the drive engine's faults: the programs of package drive's
// generator (drive.GenerateProgram: correct use, with counts past 256,
// deep scopes, addresses handed out again), run on the runtime in process
// with the model as oracle, as tlcheck fuzz --exec runs them over the
// pipe. A failure is shrunk as a flat program's is.
func long(faults []impl.Fault, seed uint64, more func(int) bool) Result {
	cfg := impl.Config{Faults: faults}
	rng := rand.New(rand.NewPCG(seed, 0x746c636865636b)) // drive.Runner.Search's stream
	var r Result
	for more(r.Programs) {
		r.Programs++
		p := drive.GenerateProgram(rng, 0)
		if _, f := properties.Run(p, cfg); f == nil {
			continue
		}
		small, sf := properties.Shrink(p, cfg)
		var trace bytes.Buffer
		_ = sf.WriteTrace(&trace) // a bytes.Buffer takes every write
		r.Events, r.Size, r.Counterexample, r.Property = sf.Events(), sf.Events(), trace.String(), brokenList(sf)
		_, g := properties.Run(small, impl.Config{})
		r.Caught = g == nil || len(faults) == 0
		return r
	}
	return r
}
