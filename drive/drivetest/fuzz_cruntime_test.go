package drivetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// FuzzCRuntime is the README's fuzz target, over examples/cruntime's
// driver: Go's fuzzing engine (or libFuzzer, built by
// .clusterfuzzlite/build.sh) driving a runtime in C. The file stands
// alone, as ClusterFuzzLite's builder compiles it with the package's code
// and nothing else: the driver is $TLCHECK_CRUNTIME_DRIVER, or built here
// with $CC (gcc by default); without either the target skips. It is Fuzz
// spelled out, since the libFuzzer build's testing.F is not package
// testing's, which Fuzz takes.
func FuzzCRuntime(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	z := cRuntimeFuzzer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := z.run(data); err != nil {
			t.Fatal(err)
		}
	})
}

// cRuntime is the target's driver and fuzzer, made once a process: a
// libFuzzer build calls the target function for every input, and its F's
// temporary folder does not outlive the call. The driver ends when the
// process does (its stdin closes).
var cRuntime struct {
	sync.Mutex
	z *fuzzer
}

func cRuntimeFuzzer(f *testing.F) *fuzzer {
	cRuntime.Lock()
	defer cRuntime.Unlock()
	if cRuntime.z == nil {
		cRuntime.z = &fuzzer{command: []string{cRuntimeDriver(f)}}
	}
	return cRuntime.z
}

func cRuntimeDriver(f *testing.F) string {
	if bin := os.Getenv("TLCHECK_CRUNTIME_DRIVER"); bin != "" {
		return bin
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		f.Skipf("no C compiler (%s) and no $TLCHECK_CRUNTIME_DRIVER", cc)
	}
	src := filepath.Join("..", "..", "examples", "cruntime")
	dir, err := os.MkdirTemp("", "tlrt-driver-")
	if err != nil {
		f.Fatalf("building the C driver: %v", err)
	}
	bin := filepath.Join(dir, "tlrt-driver")
	out, err := exec.Command(cc, "-O2", "-o", bin, filepath.Join(src, "tlrt.c"), filepath.Join(src, "driver.c")).CombinedOutput()
	if err != nil {
		f.Fatalf("building the C driver: %v\n%s", err, out)
	}
	return bin
}
