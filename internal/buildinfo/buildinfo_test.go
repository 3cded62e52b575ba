package buildinfo

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestWrite(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"none", nil, false, "tlcheck (version unknown: the binary holds no build information)\n  go        " + runtime.Version() + " " + platform + "\n"},
		{"release", &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "example.com/m", Version: "v1.2.0"}}, true,
			"tlcheck v1.2.0\n  module    example.com/m\n  go        go1.99.1 " + platform + "\n"},
		{"checkout", &debug.BuildInfo{GoVersion: "go1.99.1", Settings: []debug.BuildSetting{
			{Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-11-25T23:57:24Z"},
			{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs", Value: "git"}, {Key: "vcs.time", Value: ""}}}, true,
			"tlcheck (devel)\n  go        go1.99.1 " + platform + "\n  revision  0123abcd\n  time      2026-11-25T23:57:24Z\n  modified  true\n"},
	} {
		var b bytes.Buffer
		if err := Write(&b, "tlcheck", c.bi, c.ok); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, b.String(), c.want)
		}
	}
}
