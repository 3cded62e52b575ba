package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/python"
)

// TestFuzzAgainstTorchHonoursDepartures is the README's --against command,
// the Go engine against real PyTorch: the differences both drivers
// declare in their hellos (the engine's matmul of matrices only, 1.13's
// order of DivBackward0's operands, ...) are set aside, counted and named,
// and the command passes where it failed on every seed.
func TestFuzzAgainstTorchHonoursDepartures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: PyTorch's start and programs take seconds")
	}
	py, err := python.Find("torch")
	if err != nil {
		t.Skip(err)
	}
	engine := shellQuote(goDriver(t)) + " -autograd"
	torch := shellQuote(py) + " " + shellQuote(filepath.Join("..", "..", "examples", "torchdriver", "driver.py"))
	for _, seed := range []string{"1", "2"} {
		code, out, errOut := tlcheck(false, "fuzz", "--exec", engine, "--against", torch, "--time", "4s", "--seed", seed,
			"--call-timeout", "20s", "--out", t.TempDir())
		if code != exitClean || !strings.Contains(out, "no disagreement") {
			t.Errorf("seed %s: exit %d, want 0 and no disagreement\n%s%s", seed, code, out, errOut)
		}
		if !strings.Contains(out, "a departure it declares: driver A's matmul-matrices-only") {
			t.Errorf("seed %s: no program set aside under the engine's matmul departure:\n%s", seed, out)
		}
	}
}
