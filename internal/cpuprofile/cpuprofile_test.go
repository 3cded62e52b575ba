package cpuprofile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestStartWritesAProfile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := Start(out, []string{"-", "trace.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s is there before stop: %v", out, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := profile.Parse(f); err != nil {
		t.Errorf("the profile does not parse: %v", err)
	}
}

func TestStartRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(in, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(in, []string{in}); err == nil || !strings.Contains(err.Error(), "is one of the files to replay") {
		t.Errorf("an input as the profile: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(in); string(b) != "{}\n" {
		t.Errorf("the input was changed: %q", b)
	}
	if _, err := Start(filepath.Join(dir, "missing", "cpu.pprof"), nil); err == nil {
		t.Error("a profile in a missing directory was started")
	}
}
