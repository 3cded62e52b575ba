package drive_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDriveLinksOnlyWhatItNeeds: package drive, without its tests, links
// no runtime (impl and the packages under it), not properties (which
// brings impl), and not testing (the Go-test helpers are drivetest's).
// The failure names the chain of imports that brought one in.
func TestDriveLinksOnlyWhatItNeeds(t *testing.T) {
	const module = "github.com/tlcheck/tlcheck/"
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no go command: nothing to read the imports with
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
	}
	forbidden := func(p string) bool {
		return p == "testing" || p == module+"properties" || p == module+"impl" || strings.HasPrefix(p, module+"impl/")
	}
	// Breadth first from drive, so that each chain named is a shortest one.
	from := map[string]string{module + "drive": ""}
	queue := []string{module + "drive"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range imports[p] {
			if _, seen := from[q]; seen {
				continue
			}
			from[q] = p
			queue = append(queue, q)
			if forbidden(q) {
				chain := []string{q}
				for c := p; c != ""; c = from[c] {
					chain = append([]string{c}, chain...)
				}
				t.Errorf("package drive links %s: %s", q, strings.Join(chain, " -> "))
			}
		}
	}
	if len(from) < 10 {
		t.Fatalf("go list named %d packages reachable from drive: the check saw nothing", len(from))
	}
}
