package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
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
