package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/pprof/profile"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// hostileSites is a trace whose sites would clear the screen and set the
// window title, print a NUL, and break UTF-8; hostileLog an mtrace log
// whose caller holds an escape sequence and bytes that are not UTF-8.
var (
	hostileSites = `{"format":"tlcheck-trace","version":1,"source":"\u001b]0;src\u0007"}
{"op":"malloc","addr":"0x10","size":8,"site":"\u001b[2J\u001b]0;pwned\u0007"}
{"op":"malloc","addr":"0x20","size":8,"site":"nul\u0000here"}
{"op":"free","addr":"0x20","site":"x\u009b31m"}
{"op":"free","addr":"0x20","site":"again"}
{"op":"end"}
`
	hostileLog = "= Start\n@ ./prog\xff\x1b[2J:[0x11ce] + 0x10 0x8\n@ ./prog\xc3:[0x11d0] - 0x99\n"
)

// TestOutputIsSafe: strings from inputs reach no output raw. Every report
// format and the text exports are valid UTF-8 and hold no control
// character but newlines (and tabs, which JSON indentation does not use);
// the human report shows what was escaped as strconv.Quote shows it.
func TestOutputIsSafe(t *testing.T) {
	for name, input := range map[string]string{"trace": hostileSites, "mtrace": hostileLog} {
		for _, args := range [][]string{
			{"replay"}, {"replay", "--json"}, {"replay", "--format", "sarif"}, {"replay", "--format", "junit"},
			{"export", "--format", "html"}, {"export", "--format", "perfetto"},
		} {
			t.Run(name+"/"+strings.Join(args, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				e := &env{stdin: strings.NewReader(input), stdout: &stdout, stderr: &stderr}
				if code := run(e, append(args, "-")); code != exitViolation {
					t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
				}
				out := stdout.String()
				if !utf8.ValidString(out) {
					t.Errorf("output is not valid UTF-8:\n%q", out)
				}
				for i, r := range out {
					if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 {
						t.Errorf("a raw %U at byte %d: %q", r, i, out[max(i-40, 0):min(i+40, len(out))])
						break
					}
				}
			})
		}
	}
	_, out, _ := replay(hostileSites, "-")
	for _, want := range []string{`(line 2, \x1b[2J\x1b]0;pwned\a)`, `nul\x00here`, `x\u009b31m`} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not show %s:\n%s", want, out)
		}
	}
	_, out, _ = replay(hostileLog, "-")
	if !strings.Contains(out, `./prog\xff\x1b[2J:[0x11ce]`) {
		t.Errorf("the report does not show the mtrace caller escaped:\n%s", out)
	}
}

// TestBinaryExportsAreSafe: the names a profile gives go tool pprof, which
// prints them, and the frames of a snapshot, which Python must decode as
// UTF-8, are escaped too.
func TestBinaryExportsAreSafe(t *testing.T) {
	dev := `{"format":"tlcheck-trace","version":1}
{"op":"dev_malloc","addr":"0x1000","size":4096,"site":"seg\u001b[2J\u0000"}
{"op":"pool_get","addr":"0x1000","size":64,"site":"pool\u009b"}
{"op":"malloc","addr":"0x10","size":8,"site":"\u001b]0;pwned\u0007.c:3"}
{"op":"end"}
`
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(dev), stdout: &stdout, stderr: &stderr}
	if code := run(e, []string{"export", "--format", "pprof", "-"}); code != exitViolation {
		t.Fatalf("pprof: exit %d, %s", code, stderr.String())
	}
	prof, err := profile.Parse(&stdout)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range prof.Function {
		for _, s := range []string{fn.Name, fn.SystemName, fn.Filename} {
			if safetext.Escape(s) != s {
				t.Errorf("the profile names %q raw", s)
			}
		}
	}
	stdout.Reset()
	e = &env{stdin: strings.NewReader(dev), stdout: &stdout, stderr: &stderr}
	if code := run(e, []string{"export", "--format", "torch-snapshot", "-"}); code != exitViolation {
		t.Fatalf("torch-snapshot: exit %d, %s", code, stderr.String())
	}
	evs := snapshotEvents(t, stdout.Bytes())
	if len(evs) == 0 {
		t.Fatal("the snapshot holds no events")
	}
	for _, ev := range evs {
		if safetext.Escape(ev.Site) != ev.Site {
			t.Errorf("the snapshot holds the frame %q raw", ev.Site)
		}
	}
}

// snapshotEvents reads a snapshot's events back.
func snapshotEvents(t *testing.T, data []byte) []traces.Event {
	t.Helper()
	r, err := torchsnap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var evs []traces.Event
	for {
		var ev traces.Event
		if err := r.Next(&ev); err != nil {
			return evs
		}
		evs = append(evs, ev)
	}
}
