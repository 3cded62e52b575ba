package drive

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// FuzzCRuntime is the README's fuzz target, over examples/cruntime's
// driver: Go's fuzzing engine (or libFuzzer, built by
// .clusterfuzzlite/build.sh) driving a runtime in C. The file stands
// alone, as ClusterFuzzLite's builder compiles it with the package's code
// and nothing else: the driver is $TLCHECK_CRUNTIME_DRIVER, or built here
// with $CC (gcc by default); without either the target skips.
func FuzzCRuntime(f *testing.F) { Fuzz(f, cRuntimeDriver(f)) }

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
	src := filepath.Join("..", "examples", "cruntime")
	bin := filepath.Join(f.TempDir(), "tlrt-driver")
	out, err := exec.Command(cc, "-O2", "-o", bin, filepath.Join(src, "tlrt.c"), filepath.Join(src, "driver.c")).CombinedOutput()
	if err != nil {
		f.Fatalf("building the C driver: %v\n%s", err, out)
	}
	return bin
}
