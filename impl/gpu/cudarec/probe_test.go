package cudarec_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/impl/gpu/cudarec"
)

// python finds an interpreter that runs: TLCHECK_PYTHON, else the usual
// names. The probe's dry run needs no torch.
func python(t *testing.T) string {
	t.Helper()
	cands := []string{"python3", "python3.12", "python3.11", "/usr/bin/python3", "python"}
	if p := os.Getenv("TLCHECK_PYTHON"); p != "" {
		cands = append([]string{p}, cands...)
	}
	for _, c := range cands {
		if path, err := exec.LookPath(c); err == nil && exec.Command(path, "-c", "import json, gzip, random").Run() == nil {
			return path
		}
	}
	t.Skip("no Python interpreter found (set TLCHECK_PYTHON)")
	return ""
}

// TestProbeDryRun: what the probe writes, Read reads. The probe's dry run
// fakes the GPU (the numbers are wrong, the shape is the real one), so
// the contract between the probe and this package is checked without a
// GPU.
func TestProbeDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the probe in Python; -short skips it")
	}
	py := python(t)
	out := t.TempDir()
	cmd := exec.Command(py, filepath.Join("..", "cudaprobe", "probe.py"), "--dry-run", "--out", out, "--budget", "60", "--only", "split24,conf8")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("probe --dry-run: %v\n%s", err, b)
	}
	files, err := cudarec.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("%d recordings, want split24 and conf8", len(files))
	}
	f := files[1]
	if f.Header == nil || f.Header.AllocConf != "max_split_size_mb:24" || !f.Complete || len(f.Programs) < 100 {
		t.Errorf("split24: header %+v, complete %v, %d programs; want max_split_size_mb:24, complete, over 100", f.Header, f.Complete, len(f.Programs))
	}
	for _, p := range f.Programs {
		if len(p.Steps) == 0 || len(p.Steps[0].Stats) != len(f.Header.Keys) {
			t.Fatalf("%s: %d steps, stats do not fit the header", p.Name, len(p.Steps))
		}
	}
	if c := files[0].Configs; len(c) != 1 || c[0].AllocConf != "max_split_size_mb:8" {
		t.Errorf("conf8: %+v, want one configuration check", c)
	}
}
