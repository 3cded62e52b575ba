package main

import (
	"fmt"
	"os"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/properties/hunt"
)

// writeDetection hunts every fault of the catalog, as `tlcheck selftest`
// does, and writes the report to out: reports/detection.md, which only
// this command writes (selftest writes a report only where --report
// says). It fails, writing nothing, when a fault escapes or the control
// fails.
func writeDetection(out string, budget time.Duration, seed uint64) error {
	rep := hunt.All(hunt.Options{Budget: budget, Seed: seed})
	if err := rep.WriteTable(os.Stderr); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("detection: %s; %s not written", rep.Summary(), out)
	}
	return atomicfile.Replace(out, rep.Markdown())
}
