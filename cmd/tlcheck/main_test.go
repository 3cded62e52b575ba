package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/internal/texttest"
)

// TestUsageErrors holds usage errors to the go command's shape: the
// error, then one usage line and where the details are; never the whole
// help, which would bury the error.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // the lines of stderr, exactly
	}{
		{"unknown command", []string{"frobnicate"}, []string{
			`tlcheck: unknown command "frobnicate"`,
			"Run 'tlcheck help' for usage.",
		}},
		{"unknown top-level flag", []string{"--json"}, []string{
			`tlcheck: unknown flag "--json"`,
			"Run 'tlcheck help' for usage.",
		}},
		{"bad flag", []string{"replay", "--jsn", "a.jsonl"}, []string{
			"tlcheck replay: flag provided but not defined: -jsn",
			firstLine(replayUsage),
			"Run 'tlcheck help replay' for details.",
		}},
		{"no file", []string{"replay"}, []string{
			"tlcheck replay: no files to replay",
			firstLine(replayUsage),
			"Run 'tlcheck help replay' for details.",
		}},
		{"bad flag value", []string{"fuzz", "--time", "soon"}, []string{
			`tlcheck fuzz: invalid value "soon" for flag -time: parse error`,
			firstLine(fuzzUsage),
			"Run 'tlcheck help fuzz' for details.",
		}},
		{"stray argument", []string{"faults", "extra"}, []string{
			`tlcheck faults: unexpected argument "extra"`,
			firstLine(faultsUsage),
			"Run 'tlcheck help faults' for details.",
		}},
		{"selftest stray argument", []string{"selftest", "extra"}, []string{
			`tlcheck selftest: unexpected argument "extra"`,
			firstLine(selftestUsage),
			"Run 'tlcheck help selftest' for details.",
		}},
		{"version argument", []string{"version", "extra"}, []string{
			`tlcheck version: unexpected argument "extra"`,
			firstLine(versionUsage),
			"Run 'tlcheck help version' for details.",
		}},
		{"help of nothing known", []string{"help", "frobnicate"}, []string{
			`tlcheck help: unknown command "frobnicate"`,
			"The commands: " + commandNames() + ".", // grows as commands are added
		}},
		{"help of two", []string{"help", "replay", "fuzz"}, []string{
			`tlcheck help: unexpected argument "fuzz"`,
			firstLine(helpUsage),
			"Run 'tlcheck help help' for details.",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := tlcheck(false, tt.args...)
			if code != exitInput {
				t.Errorf("exit %d, want %d", code, exitInput)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if got := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", errOut, strings.Join(tt.want, "\n"))
			}
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestHelp covers help asked for: by name on stdout, by flag on stderr
// (where the flag package puts it), exit 0 either way; and tlcheck with no
// arguments, which is bad usage and lists the commands.
func TestHelp(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		out, err string // the whole of stdout and stderr
	}{
		{[]string{"help"}, exitClean, topUsage(), ""},
		{[]string{"-h"}, exitClean, "", topUsage()},
		{[]string{"-help"}, exitClean, "", topUsage()},
		{[]string{"--help"}, exitClean, "", topUsage()},
		{nil, exitInput, "", topUsage()},
		{[]string{"help", "replay"}, exitClean, replayUsage, ""},
		{[]string{"help", "fuzz"}, exitClean, fuzzUsage, ""},
		{[]string{"help", "faults"}, exitClean, faultsUsage, ""},
		{[]string{"help", "selftest"}, exitClean, selftestUsage, ""},
		{[]string{"help", "version"}, exitClean, versionUsage, ""},
		{[]string{"help", "help"}, exitClean, helpUsage, ""},
		{[]string{"replay", "-h"}, exitClean, "", replayUsage},
		{[]string{"version", "--help"}, exitClean, "", versionUsage},
	}
	for _, tt := range tests {
		code, out, errOut := tlcheck(false, tt.args...)
		if code != tt.code || out != tt.out || errOut != tt.err {
			t.Errorf("tlcheck %q: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s",
				tt.args, code, out, errOut, tt.code, tt.out, tt.err)
		}
	}
}

// TestHelpListsEveryCommand keeps the list honest as commands are added:
// every command is listed, and help prints its usage.
func TestHelpListsEveryCommand(t *testing.T) {
	_, list, _ := tlcheck(false, "help")
	for _, c := range commands {
		if !strings.Contains(list, "\n  "+c.name+" ") {
			t.Errorf("help does not list %s:\n%s", c.name, list)
		}
		code, out, _ := tlcheck(false, "help", c.name)
		if code != exitClean || !strings.HasPrefix(out, "usage: tlcheck "+c.name) {
			t.Errorf("help %s: exit %d, stdout starts %.60q; want its usage", c.name, code, out)
		}
	}
}

func topUsage() string {
	var b bytes.Buffer
	usage(&b)
	return b.String()
}

func TestVersion(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	release := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/tlcheck/tlcheck", Version: "v1.2.0"}}
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/tlcheck/tlcheck", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"},
			{Key: "vcs.modified", Value: "true"}, // out of order: printed in a fixed one
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-25T23:57:24Z"},
		}}
	tests := []struct {
		name string
		args []string
		bi   *debug.BuildInfo
		want string
	}{
		{"release", []string{"version"}, release, "tlcheck v1.2.0\n" +
			"  module    github.com/tlcheck/tlcheck\n" +
			"  go        go1.26.8 " + platform + "\n"},
		{"--version", []string{"--version"}, release, "tlcheck v1.2.0\n" +
			"  module    github.com/tlcheck/tlcheck\n" +
			"  go        go1.26.8 " + platform + "\n"},
		{"checkout", []string{"version"}, checkout, "tlcheck (devel)\n" +
			"  module    github.com/tlcheck/tlcheck\n" +
			"  go        go1.26.8 " + platform + "\n" +
			"  revision  0123456789abcdef0123456789abcdef01234567\n" +
			"  time      2026-11-25T23:57:24Z\n" +
			"  modified  true\n"},
		{"no build information", []string{"-version"}, nil, "tlcheck (version unknown: the binary holds no build information)\n" +
			"  go        " + runtime.Version() + " " + platform + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
				buildInfo: func() (*debug.BuildInfo, bool) { return tt.bi, tt.bi != nil }}
			if code := run(e, tt.args); code != exitClean || stderr.Len() != 0 {
				t.Errorf("exit %d, stderr %q", code, stderr.String())
			}
			if stdout.String() != tt.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), tt.want)
			}
		})
	}
}

// TestVersionOfThisBinary reads the real build information, which a test
// binary has: the module path and the Go version that built it.
func TestVersionOfThisBinary(t *testing.T) {
	code, out, _ := tlcheck(false, "version")
	if code != exitClean || !strings.HasPrefix(out, "tlcheck ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
}

// assertLines is texttest.Lines, under the name the command's tests use.
var assertLines = texttest.Lines

// TestHelpNamesEveryInputFormat: each command that reads traces lists every
// format package input reads, in its synopsis and in the text of --from.
func TestHelpNamesEveryInputFormat(t *testing.T) {
	for _, name := range []string{"replay", "gate", "export"} {
		_, out, _ := tlcheck(false, "help", name)
		var synopsis, flag []string // the lines naming --from, and --from's text
		lines := strings.Split(out, "\n")
		for i, line := range lines {
			if strings.Contains(line, "[--from ") {
				synopsis = append(synopsis, line)
			}
			if strings.HasPrefix(strings.TrimSpace(line), "--from FORMAT") {
				flag = append(flag, line)
				for _, l := range lines[i+1:] {
					if strings.HasPrefix(strings.TrimSpace(l), "--") || strings.TrimSpace(l) == "" {
						break
					}
					flag = append(flag, l)
				}
			}
		}
		for what, text := range map[string]string{"synopsis": strings.Join(synopsis, " "), "--from FORMAT": strings.Join(flag, " ")} {
			for _, f := range input.Formats() {
				if !strings.Contains(text, string(f)) {
					t.Errorf("help %s: its %s does not name %s:\n%s", name, what, f, text)
				}
			}
		}
	}
}
