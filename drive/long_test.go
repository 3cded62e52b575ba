package drive_test

import (
	"testing"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
)

// TestImplDriverLongFaults: the faults only long programs show (the drive
// engine's: u8-count, a count kept in a byte) are caught over the pipe by
// the default search, as tlcheck fuzz --exec and drivetest.Test run it: with
// programs of correct use, and with programs of misuse for a driver whose
// hello asks for them (impldriver's does).
func TestImplDriverLongFaults(t *testing.T) {
	n := 0
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EngineDrive {
			continue
		}
		n++
		for _, mode := range []struct {
			name   string
			misuse drive.Misuse
		}{{"correct use", drive.MisuseOff}, {"misuse", drive.MisuseAsHello}} {
			t.Run(string(f.Name)+"/"+mode.name, func(t *testing.T) {
				r, err := drive.NewRunner(testDriver("impl:"+string(f.Name), hangTimeout))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				found, programs, err := r.Search(drive.Options{Seed: 1, Misuse: mode.misuse,
					More: func(n int) bool { return n < 200 }}) // drivetest.Test's budget under -short
				if err != nil {
					t.Fatal(err)
				}
				if len(found) == 0 {
					t.Fatalf("not caught in %d programs", programs)
				}
				fd := found[0]
				t.Logf("caught at program %d, shrunk from %d steps to %d in %d runs: %v", fd.Index, fd.Steps, len(fd.Program.Steps), fd.Shrinks, fd.Failure())
				if got := len(fd.Program.Steps); got > 300 {
					t.Errorf("shrunk to %d steps, want at most 300", got)
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("no fault of the drive engine in the catalog")
	}
}
