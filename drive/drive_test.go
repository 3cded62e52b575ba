package drive_test

import (
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
)

func TestImplDriverClean(t *testing.T) {
	r, err := drive.NewRunner(testDriver("impl", 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	found, n, err := r.Search(drive.Options{Seed: 1, More: func(n int) bool { return n < 300 }})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("the Go runtime without faults failed program %d of %d:\n%v\n%s", found[0].Index, n, found[0].Failure(), found[0].Result.Listing())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestImplDriverFaults(t *testing.T) {
	for _, f := range []impl.Fault{impl.FaultStaleRecordNotPurged, impl.FaultUnregisterReleases, impl.FaultStructInitNoAcquire} {
		t.Run(string(f), func(t *testing.T) {
			r, err := drive.NewRunner(testDriver("impl:"+string(f), 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			found, n, err := r.Search(drive.Options{Seed: 1, More: func(n int) bool { return n < 5000 }})
			if err != nil {
				t.Fatal(err)
			}
			if len(found) == 0 {
				t.Fatalf("not caught in %d programs", n)
			}
			t.Logf("caught in %d programs, shrunk to %d steps:\n%v\n%s", n, len(found[0].Program.Steps), found[0].Failure(), found[0].Result.Listing())
		})
	}
}
