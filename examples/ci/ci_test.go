package ci

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gateScript runs tlcheck-gate.sh into a fresh folder with the given
// flags for the traced program, and returns its exit code, its output and
// the folder.
func gateScript(t *testing.T, tlcheck string, args ...string) (int, string, string) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("bash", append([]string{"tlcheck-gate.sh", out}, args...)...)
	cmd.Env = append(os.Environ(), "TLCHECK="+tlcheck, "TLCHECK_UPDATE=")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, buf.String(), out
}

// TestGateScript runs the example CI's steps offline: the program as it
// is passes the committed baseline, and the same program with a bug of the
// runtime's catalogue switched on fails it, naming the new findings.
func TestGateScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is missing")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is missing")
	}
	tlcheck := filepath.Join(t.TempDir(), "tlcheck")
	if out, err := exec.Command(gobin, "build", "-o", tlcheck, "../../cmd/tlcheck").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	code, stdout, out := gateScript(t, tlcheck)
	if code != 0 || !strings.Contains(stdout, "GATE: PASS") {
		t.Fatalf("exit %d, want 0; if the traced program changed on purpose, regenerate the baseline with\n"+
			"  TLCHECK_UPDATE=1 examples/ci/tlcheck-gate.sh /tmp/tlcheck\nand review its diff:\n%s", code, stdout)
	}
	var sarif struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID        string
				BaselineState string
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "tlcheck.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs) != 1 {
		t.Fatalf("SARIF: %v\n%s", err, data)
	}
	for _, r := range sarif.Runs[0].Results {
		if r.BaselineState != "unchanged" {
			t.Errorf("result %+v: want every finding known to the baseline", r)
		}
	}
	if len(sarif.Runs[0].Results) == 0 {
		t.Error("no results: the baseline's known leak is missing from the SARIF")
	}
	data, err = os.ReadFile(filepath.Join(out, "tlcheck-junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(data, &junit); err != nil || junit.Tests != 2 || junit.Failures != 0 {
		t.Errorf("JUnit: %v %+v\n%s", err, junit, data)
	}

	code, stdout, _ = gateScript(t, tlcheck, "-fault", "unregister-releases")
	// The runtime states its counts: the unregister that released is a
	// count-mismatch where it happens, before the premature free it causes.
	if code != 1 || !strings.Contains(stdout, "GATE: FAIL: 4 new findings") ||
		!strings.Contains(stdout, "ERROR: count-mismatch") || !strings.Contains(stdout, "ERROR: premature-free") {
		t.Errorf("with a bug: exit %d, want 1 naming the new findings:\n%s", code, stdout)
	}
}

// TestWorkflowCallsTheScript keeps the workflow and the tested script
// together: the workflow runs the script and uploads what it writes.
func TestWorkflowCallsTheScript(t *testing.T) {
	data, err := os.ReadFile("tlcheck-gate.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`run: examples/ci/tlcheck-gate.sh "$RUNNER_TEMP/tlcheck"`,
		"uses: github/codeql-action/upload-sarif@",
		"sarif_file: ${{ runner.temp }}/tlcheck/tlcheck.sarif",
		"security-events: write",
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the workflow lacks %q", want)
		}
	}
	if bytes.Contains(data, []byte("\t")) {
		t.Error("the workflow has a tab, which YAML does not allow for indentation")
	}
}
