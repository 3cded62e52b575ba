package properties

import (
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/properties/flat"
)

// Program is a program of the flat language (package flat), the one Run,
// Passes, Search and Shrink take; the name stays here because the harness
// speaks of it at every turn.
type Program = flat.Program

// Generate draws a random program of about 4 to 80 steps from r
// (flat.Generate), as Search does.
func Generate(r *rand.Rand) Program { return flat.Generate(r) }
