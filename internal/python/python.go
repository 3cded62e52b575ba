// Package python finds a Python interpreter that imports a module: how
// the tests, the reports and the command start examples/torchdriver, the
// PyTorch driver, with a Python that has torch.
package python

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Find returns a Python interpreter that imports module: the one
// $TLCHECK_PYTHON names, else the first of python3, python3.13 ...
// python3.9 and python on the PATH, then /usr/bin/python3 and
// /usr/local/bin/python3, that does. The first python3 on the PATH need
// not be the one that has the module (Debian's python3-torch installs for
// Debian's own Python): the PyTorch driver (examples/torchdriver) is run
// with what this finds. The error lists what was tried.
func Find(module string) (string, error) {
	cands := []string{"python3", "python3.13", "python3.12", "python3.11", "python3.10", "python3.9", "python", "/usr/bin/python3", "/usr/local/bin/python3"}
	if env := os.Getenv("TLCHECK_PYTHON"); env != "" {
		cands = append([]string{env}, cands...)
	}
	var tried []string
	seen := map[string]bool{}
	for _, c := range cands {
		path, err := exec.LookPath(c)
		if err != nil || seen[path] {
			continue
		}
		seen[path] = true
		tried = append(tried, path)
		if exec.Command(path, "-c", "import "+module).Run() == nil {
			return path, nil
		}
	}
	if len(tried) == 0 {
		return "", fmt.Errorf("no Python interpreter found (TLCHECK_PYTHON, python3, ...)")
	}
	return "", fmt.Errorf("no Python that imports %s (tried %s)", module, strings.Join(tried, ", "))
}
