package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestMtraceMatchesGlibc traces real programs with glibc's mtrace and holds
// tlcheck's leak list to the one glibc's script prints for the same log.
func TestMtraceMatchesGlibc(t *testing.T) {
	dir := t.TempDir()
	preload := mtraceTools(t, dir)
	programs := []struct {
		name string
		env  []string
		argv []string
	}{
		{"sqlite3", nil, []string{"sqlite3", ":memory:",
			"create table t(x integer primary key, y text);" +
				"insert into t(y) select hex(randomblob(20)) from (with recursive c(n) as (select 1 union all select n+1 from c where n<300) select n from c);" +
				"create index i on t(y); select count(*) from t;"}},
		{"perl", nil, []string{"perl", "-e",
			`my %h; $h{$_} = "x" x $_ for 1..500; my @a = map { [$_, {k => $_}] } 1..300; print scalar(keys %h), "\n"`}},
		{"python3", nil, []string{"python3", "-c",
			`import json; d = [{"k": i, "v": [str(i)] * 3} for i in range(500)]; print(len(json.loads(json.dumps(d))))`}},
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			log := mtraceLog(t, preload, dir, p.name, p.env, p.argv...)
			want := glibcLeaks(t, log)
			got, rep := tlcheckLeaks(t, log)
			if !rep.Complete {
				t.Error("report says the log is incomplete: the end of the log must be its end")
			}
			if diff := cmpBlocks(want, got); diff != "" {
				t.Errorf("leak lists differ (-mtrace +tlcheck):\n%s", diff)
			}
			var bytes uint64
			for _, b := range want {
				bytes += b.Size
			}
			if rep.Leaked.Objects != len(want) || rep.Leaked.Bytes != bytes {
				t.Errorf("leaked totals %+v, mtrace's list has %d blocks of %d bytes", rep.Leaked, len(want), bytes)
			}
			t.Logf("%d blocks not freed (%d bytes), %d events, agreed with glibc's mtrace", len(want), bytes, rep.Events)
		})
	}
}

// TestMtraceHandMade checks small logs whose verdicts are known, against
// the model and against glibc's script where it has a leak list to give.
func TestMtraceHandMade(t *testing.T) {
	tests := []struct {
		name  string
		log   string
		code  int
		kinds []traces.Kind
		leaks []block // also what glibc's script lists
	}{
		{
			name: "clean, with realloc halves and a failed realloc",
			log:  "= Start\n@ a:[0x1] + 0x1000 0x10\n@ a:[0x2] < 0x1000\n@ a:[0x2] > 0x2000 0x20\n@ a:[0x3] ! 0x2000 0x100000\n@ a:[0x4] - 0x2000\n= End\n",
			code: exitClean,
		},
		{
			name:  "a block not freed",
			log:   "@ a:[0x1] + 0x1000 0x10\n@ a:[0x2] + 0x2000 0\n@ a:[0x3] - 0x1000\n",
			code:  exitViolation,
			kinds: []traces.Kind{traces.Leak},
			leaks: []block{{0x2000, 0, "0x2"}},
		},
		{
			name:  "threads: a free logged before its malloc is a violation, not bad input",
			log:   "@ t2:[0x9] - 0x3000\n@ t1:[0x8] + 0x3000 0x30\n",
			code:  exitViolation,
			kinds: []traces.Kind{traces.InvalidAddress, traces.Leak},
			leaks: []block{{0x3000, 0x30, "0x8"}},
		},
		{
			name:  "a malloc at a live address keeps the first block, as glibc's script does",
			log:   "@ a:[0x1] + 0x1000 0x10\n@ a:[0x2] + 0x1000 0x20\n@ a:[0x3] + 0x1008 0x8\n@ a:[0x4] - 0x1004\n",
			code:  exitViolation,
			kinds: []traces.Kind{traces.Overlap, traces.Overlap, traces.InvalidAddress, traces.Leak, traces.Leak},
			leaks: []block{{0x1000, 0x10, "0x1"}, {0x1008, 0x8, "0x3"}},
		},
		{
			name:  "double free",
			log:   "+ 0x1000 0x10\n- 0x1000\n- 0x1000\n",
			code:  exitViolation,
			kinds: []traces.Kind{traces.DoubleFree},
		},
		{
			name:  "realloc half of a freed block",
			log:   "+ 0x1000 0x10\n- 0x1000\n< 0x1000\n> 0x2000 0x20\n",
			code:  exitViolation,
			kinds: []traces.Kind{traces.DoubleFree, traces.Leak},
			leaks: []block{{0x2000, 0x20, ""}},
		},
	}
	dir := t.TempDir()
	_, scriptErr := exec.LookPath("mtrace")
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := filepath.Join(dir, fmt.Sprintf("%d.mtrace", i))
			if err := os.WriteFile(log, []byte(tt.log), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run(&env{stdout: &stdout, stderr: &stderr}, []string{"replay", "--from", "mtrace", "--json", log})
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			var rep traces.Report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("--json: %v: %s", err, stdout.String())
			}
			var kinds []traces.Kind
			for _, v := range rep.Violations {
				kinds = append(kinds, v.Kind)
			}
			if !slices.Equal(kinds, tt.kinds) {
				t.Errorf("violations %v, want %v\n%s", kinds, tt.kinds, stdout.String())
			}
			got, _ := tlcheckLeaks(t, log)
			if diff := cmpBlocks(tt.leaks, got); diff != "" {
				t.Errorf("leaks (-want +got):\n%s", diff)
			}
			if scriptErr == nil {
				if diff := cmpBlocks(glibcLeaks(t, log), got); diff != "" {
					t.Errorf("leaks differ from glibc's mtrace (-mtrace +tlcheck):\n%s", diff)
				}
			}
		})
	}
}

// TestMtraceBadLine checks that an unreadable line exits 2 naming the file
// and line, with nothing on stdout.
func TestMtraceBadLine(t *testing.T) {
	log := filepath.Join(t.TempDir(), "bad.mtrace")
	if err := os.WriteFile(log, []byte("= Start\n+ 0x1000 0x10\n+ 0x10zz 0x10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(&env{stdout: &stdout, stderr: &stderr}, []string{"replay", "--from", "mtrace", log}); code != exitInput {
		t.Fatalf("exit %d, want %d", code, exitInput)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout not empty: %q", stdout.String())
	}
	msg := stderr.String()
	for _, want := range []string{log + ":3", "event 1", `"addr"`, "0x10zz"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
}
