package drive

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// torchPython returns an interpreter that imports torch: TLCHECK_PYTHON,
// else the first of python3, python3.11, /usr/bin/python3, ... that does.
// The first python3 on the PATH need not be the one with torch (Debian's
// python3-torch installs for Debian's own Python).
var torchPython = sync.OnceValues(func() (string, string) {
	var tried []string
	cands := []string{os.Getenv("TLCHECK_PYTHON"), "python3", "python3.11", "python3.12", "python3.13", "/usr/bin/python3", "/usr/local/bin/python3", "python"}
	for _, c := range cands {
		if c == "" {
			continue
		}
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		tried = append(tried, path)
		if exec.Command(path, "-c", "import torch").Run() == nil {
			return path, ""
		}
	}
	return "", "no Python that imports torch (tried TLCHECK_PYTHON and " + filepath.Join(tried...) + "); install python3-torch"
})

// torchConfig is the Config of the PyTorch driver, or a skip.
func torchConfig(t testing.TB, args ...string) Config {
	t.Helper()
	py, why := torchPython()
	if py == "" {
		t.Skip(why)
	}
	cmd := append([]string{py, filepath.Join("..", "examples", "torchdriver", "driver.py")}, args...)
	return Config{Command: cmd, CallTimeout: 20 * time.Second, StartTimeout: 60 * time.Second}
}
