package main

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUntar(t *testing.T) {
	tests := []struct {
		name    string
		entries []tar.Header
		want    map[string]string // file: contents
		wantErr string
	}{
		{
			name: "files and directories",
			entries: []tar.Header{
				{Name: "cmd/", Typeflag: tar.TypeDir, Mode: 0o755},
				{Name: "cmd/tlcheck/main.go", Typeflag: tar.TypeReg, Mode: 0o644, Size: 12},
				{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc"},
			},
			want: map[string]string{"cmd/tlcheck/main.go": "package main"},
		},
		{
			name:    "an entry that leaves the tree",
			entries: []tar.Header{{Name: "../escape.go", Typeflag: tar.TypeReg, Mode: 0o644, Size: 12}},
			wantErr: "leaves the tree",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, h := range tt.entries {
				if err := tw.WriteHeader(&h); err != nil {
					t.Fatal(err)
				}
				if h.Typeflag == tar.TypeReg {
					tw.Write([]byte("package main"))
				}
			}
			tw.Close()
			dir := filepath.Join(t.TempDir(), "tree")
			err := untar(&buf, dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("untar: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.want {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != want {
					t.Errorf("%s: %q, %v; want %q", name, got, err, want)
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, "link")); err == nil {
				t.Error("a symlink was written")
			}
		})
	}
}

func TestRenderBaseline(t *testing.T) {
	run := func(wall time.Duration, rss int64) timing {
		return timing{Wall: []time.Duration{wall}, CPU: []time.Duration{wall}, MaxRSS: rss}
	}
	f := figures{
		Script:    run(5*time.Second, 30<<20),
		Tlcheck:   run(500*time.Millisecond, 20<<20),
		LogBytes:  400 << 20,
		Bench:     benchResult{Decode: 1e6, Replay: 7e5, Ratio: 1.4, Command: 1.2},
		Base:      &baseline{Rev: "v1", Commit: "abc1234"},
		BaseTime:  run(400*time.Millisecond, 16<<20),
		BaseBench: benchResult{Decode: 1e6, Replay: 6e5, Ratio: 1.6, Command: 1.3},
	}
	got := string(render(f))
	for _, want := range []string{
		"| mtrace replay wall time vs the baseline (abc1234), same runs | **1.25x** | at most 1.05x (unchanged or better) | **not met** |",
		"## Against the baseline",
		"| JSON Lines, command/decode | 1.30x | 1.20x | 0.92x |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	f.Base = nil
	if got := string(render(f)); strings.Contains(got, "baseline (") {
		t.Errorf("a report without a baseline mentions one:\n%s", got)
	}
}
