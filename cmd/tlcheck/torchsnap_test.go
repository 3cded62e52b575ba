package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapFile is a snapshot written by Python's pickle, in the reader's
// testdata (see traces/torchsnap/testdata/make_snapshots.py).
func snapFile(name string) string {
	return filepath.Join("..", "..", "traces", "torchsnap", "testdata", name)
}

const snapNote = "INCOMPLETE: a memory snapshot is taken mid-run: what it still holds is live, not leaked, so no leak check ran"

func TestReplayTorchSnapshots(t *testing.T) {
	globalPickle := files(t, "evil.pickle", "\x80\x02cos\nsystem\n(S'ls'\ntR.")[0]
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // parts of standard output
		stderr string   // a part of standard error
	}{
		{"protocol 2, detected", []string{snapFile("clean-p2.pickle")}, exitClean, []string{"OK: no violations", snapNote}, ""},
		{"protocol 4, detected", []string{snapFile("clean-p4.pickle")}, exitClean, []string{"events 9,", snapNote}, ""},
		{"protocol 5, named", []string{"--from", "torch-snapshot", snapFile("clean-p5.pickle")}, exitClean, []string{snapNote}, ""},
		// protocol 0 has no PROTO byte to detect it by
		{"protocol 0, named", []string{"--from", "torch-snapshot", snapFile("clean-p0.pickle")}, exitClean, []string{snapNote}, ""},
		{"a block handed out before its free completed", []string{snapFile("reuse.pickle")}, exitViolation,
			[]string{"ERROR: overlap at event 2 (train.py:51)", "allocated here: event 1 (train.py:42)", snapNote}, ""},
		{"two devices", []string{snapFile("twodev.pickle")}, exitClean, []string{"events 6,"}, ""},
		{"expandable segments", []string{snapFile("expandable.pickle")}, exitClean, []string{"OK: no violations", snapNote,
			"device memory: peak allocated 222233088 bytes (211.9 MiB) / peak reserved 232783872 bytes (222.0 MiB); at the end allocated 94994432 bytes (90.6 MiB) / reserved 232783872 bytes (222.0 MiB)"}, ""},
		{"allocated and reserved, named in json", []string{"--json", snapFile("real-cuda.pickle")}, exitClean,
			[]string{`"device_memory":{"peak_allocated_bytes":135879684,"allocated_bytes_at_end":68770820,"peak_reserved_bytes":140509184,"reserved_bytes_at_end":69206016}`}, ""},
		{"expandable segments, a block in unmapped bytes", []string{snapFile("expandable-bug.pickle")}, exitViolation,
			[]string{"ERROR: use-after-free at event 116", "which was unmapped at event 115"}, ""},
		{"real, from an H200", []string{snapFile("real-cuda.pickle")}, exitClean, []string{"OK: no violations", "events 129,", snapNote}, ""},
		{"a pickle read as a trace", []string{"--from", "trace", snapFile("clean-p4.pickle")}, exitInput, nil, "looks like a pickle, such as a PyTorch memory snapshot"},
		{"a trace read as a snapshot", []string{"--from", "torch-snapshot", filepath.Join("..", "..", "traces", "testdata", "corpus", "clean-layer4.jsonl")}, exitInput, nil, "clean-layer4.jsonl: reading a PyTorch memory snapshot: byte 0: unknown pickle opcode 0x7b"},
		{"code in the pickle", []string{globalPickle}, exitInput, nil, "evil.pickle: reading a PyTorch memory snapshot: byte 2: opcode GLOBAL would import a Python name"},
		{"json", []string{"--json", snapFile("reuse.pickle")}, exitViolation, []string{`"kind":"overlap"`, `"complete":false`}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd("", append([]string{"replay"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if !strings.Contains(stderr, tc.stderr) || (tc.stderr == "" && stderr != "") {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.stderr)
			}
		})
	}
}

// A snapshot is binary: not to a terminal.
func TestExportTorchSnapshotNotToTerminal(t *testing.T) {
	code, _, stderr := exportTTY("", true, "--format", "torch-snapshot", snapFile("clean-p4.pickle"))
	if code != exitInput || !strings.Contains(stderr, "binary") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(snapFile("clean-p4.pickle")); err != nil {
		t.Fatal(err)
	}
}
