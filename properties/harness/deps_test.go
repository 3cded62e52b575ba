package harness_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoRuntime: the harness links no runtime (no impl/ package) and
// not package testing, so that package drive, which must link neither, can
// use it.
func TestLinksNoRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 5 {
		t.Fatalf("go list -deps named %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/tlcheck/tlcheck/impl") || d == "testing" {
			t.Errorf("the harness links %s", d)
		}
	}
}
