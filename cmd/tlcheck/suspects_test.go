package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/snapgen"
)

// writeSnapshot writes a generated loop's snapshot into dir.
func writeSnapshot(t *testing.T, dir, name string, cfg snapgen.Config) string {
	t.Helper()
	s, err := snapgen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSuspectsCommand(t *testing.T) {
	dir := t.TempDir()
	loss := writeSnapshot(t, dir, "loss.pickle", snapgen.Config{Loop: snapgen.KeepLoss})
	normal := writeSnapshot(t, dir, "train.pickle", snapgen.Config{Loop: snapgen.Train})
	for _, c := range []struct {
		args []string
		code int
		want []string // in stdout
	}{
		{[]string{loss}, exitClean, []string{"LEAK SUSPECT: " + snapgen.LossSite, "11 of 11 complete iterations", "high confidence", "1 leak suspect",
			"made by:\n    cross_entropy  " + snapgen.LossSite + "\n    <module>  train.py:34\n"}},
		{[]string{"--fail-on", "leak-suspect", loss}, exitViolation, []string{"LEAK SUSPECT"}},
		{[]string{"--fail-on", "leak-suspect", normal}, exitClean, []string{"0 leak suspects"}},
		{[]string{"--iteration", "train.py:32", normal, loss}, exitClean, []string{"== " + normal, "== " + loss, "(named;"}},
		{[]string{"--format", "sarif", loss}, exitClean, []string{`"ruleId": "leak-suspect"`, `"level": "warning"`}},
		{[]string{"--iteration", "nowhere.py:1", loss}, exitInput, nil},
		{[]string{"--iteration-annotation", "Optimizer.step", loss}, exitClean, []string{"LEAK SUSPECT: " + snapgen.LossSite, "iterations begin at each Optimizer.step annotation (named; 12 seen"}},
		{[]string{"--iteration-annotation", "Optimizer.nothing", loss}, exitInput, nil},
		{[]string{"--iteration-annotation", "Optimizer.step", "--iteration", "train.py:31", loss}, exitInput, nil},
		{[]string{"--format", "junit", loss}, exitInput, nil},
		{[]string{"--fail-on", "leak", loss}, exitInput, nil},
		{[]string{filepath.Join(dir, "missing")}, exitInput, nil},
	} {
		var stdout, stderr bytes.Buffer
		code := run(&env{stdout: &stdout, stderr: &stderr}, append([]string{"suspects"}, c.args...))
		if code != c.code {
			t.Errorf("%v: exit %d, stderr %q; want %d", c.args, code, stderr.String(), c.code)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%v: no %q in\n%s", c.args, w, stdout.String())
			}
		}
	}
}

// TestSuspectsJSON: one object, the shape of check/suspect's Result.
func TestSuspectsJSON(t *testing.T) {
	loss := writeSnapshot(t, t.TempDir(), "loss.pickle", snapgen.Config{Loop: snapgen.KeepLoss})
	var stdout, stderr bytes.Buffer
	if code := run(&env{stdout: &stdout, stderr: &stderr}, []string{"suspects", "--json", loss}); code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got struct {
		Iteration struct{ Site string }
		Suspects  []struct {
			Site               string
			BlocksPerIteration int `json:"blocks_per_iteration"`
			Evidence           []struct{ Event int }
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Iteration.Site != snapgen.InputSite || len(got.Suspects) != 1 || got.Suspects[0].Site != snapgen.LossSite ||
		got.Suspects[0].BlocksPerIteration != 1 || len(got.Suspects[0].Evidence) == 0 {
		t.Errorf("JSON %+v", got)
	}
}
