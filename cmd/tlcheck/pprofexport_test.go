package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tlcheck/tlcheck/internal/tracetest"
)

const sitesTrace = tracetest.SitesTrace

// goTool returns the go command, which runs these tests.
func goTool(t *testing.T) string {
	t.Helper()
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to run go tool pprof with: %v", err)
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// pprofTop runs go tool pprof -top on file for one sample type and
// returns each site's flat value, as pprof prints it.
func pprofTop(t *testing.T, file, sampleIndex string) map[string]int64 {
	t.Helper()
	cmd := exec.Command(goTool(t), "tool", "pprof", "-symbolize=none", "-sample_index="+sampleIndex, "-top", file)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Type: "+sampleIndex) {
		t.Fatalf("go tool pprof shows another sample type:\n%s", out)
	}
	// "      300B 82.42% 82.42%       300B 82.42%  util.c:17"
	row := regexp.MustCompile(`^\s*(\d+)B?\s+[\d.]+%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.+?)\s*$`)
	got := map[string]int64{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			got[m[2]] = n
		}
	}
	return got
}

func TestExportPprofOpensInGoToolPprof(t *testing.T) {
	out := filepath.Join(t.TempDir(), "leaks.pb.gz")
	code, _, stderr := exportCmd(sitesTrace, "--format", "pprof", "--out", out, "-")
	if code != exitViolation {
		t.Fatalf("exit %d, want %d (leaks); stderr:\n%s", code, exitViolation, stderr)
	}
	tests := []struct {
		sampleIndex string
		want        map[string]int64 // sites with a non-zero value; pprof leaves out the rest
	}{
		{"leaked_bytes", map[string]int64{"a.c:1": 300, "c.c:3": 50, "./prog:[0x11ce]": 9}},
		{"leaked_objects", map[string]int64{"a.c:1": 1, "c.c:3": 1, "./prog:[0x11ce]": 1}},
		{"peak_live_bytes", map[string]int64{"a.c:1": 400, "b.c:2": 200}},
		{"peak_live_objects", map[string]int64{"a.c:1": 2, "b.c:2": 1}},
		{"alloc_bytes", map[string]int64{"a.c:1": 400, "b.c:2": 200, "c.c:3": 50, "./prog:[0x11ce]": 9}},
		{"alloc_objects", map[string]int64{"a.c:1": 2, "b.c:2": 1, "c.c:3": 1, "./prog:[0x11ce]": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.sampleIndex, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, pprofTop(t, out, tc.sampleIndex)); diff != "" {
				t.Errorf("go tool pprof -top (-want +got):\n%s", diff)
			}
		})
	}
}
