package texttest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Lines reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestLines(t *testing.T) {
	const out = "ERROR: leak\n  allocated here\nSUMMARY: 1 violation\n"
	cases := []struct {
		name string
		want []string
		fail string // the line Lines names, "" for none
	}{
		{"all, in order", []string{"ERROR: leak", "SUMMARY: 1 violation"}, ""},
		{"none", nil, ""},
		{"the trailing empty line", []string{"SUMMARY: 1 violation", ""}, ""},
		{"out of order", []string{"SUMMARY: 1 violation", "ERROR: leak"}, "ERROR: leak"},
		{"part of a line", []string{"ERROR"}, "ERROR"},
		{"indented differently", []string{"allocated here"}, "allocated here"},
		{"twice, once there", []string{"ERROR: leak", "ERROR: leak"}, "ERROR: leak"},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		Lines(r, out, c.want)
		switch {
		case c.fail == "" && len(r.errs) != 0:
			t.Errorf("%s: %q", c.name, r.errs)
		case c.fail != "" && (len(r.errs) != 1 || !strings.HasPrefix(r.errs[0], fmt.Sprintf("missing line (or out of order) %q in:", c.fail))):
			t.Errorf("%s: %q, want one error naming %q", c.name, r.errs, c.fail)
		}
	}
}
