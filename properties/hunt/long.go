package hunt

import (
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// long is the language that hunts the drive engine's faults: the flat
// programs of package drive's generator (drive.GenerateProgram: correct
// use, with counts past 256, deep scopes, addresses handed out again),
// drawn from drive.Runner.Search's stream and run on the runtime in
// process with the model as oracle, as tlcheck fuzz --exec runs them over
// the pipe; a failure is shrunk as a flat program's is, and the first
// ends the search.
func long(faults []impl.Fault) harness.Language[properties.Program] {
	l := properties.FlatLanguage(faults)
	l.Name, l.Grace = impl.EngineDrive, 0
	l.Generate = func(r *rand.Rand, _ int) properties.Program { return drive.GenerateProgram(r, 0) }
	return l
}
