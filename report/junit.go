package report

import (
	"bytes"
	"encoding/xml"
	"github.com/tlcheck/tlcheck/check"
	"io"
	"strings"
)

// JUnit XML, the report every CI test tab reads: one test suite for the
// run, one test case per file. A file that fails the run is a test case
// with a <failure> whose text is the file's human report; a file that
// could not be read is one with an <error>; a passing file keeps its
// report (warnings, suppressed and known findings) in <system-out>. The
// schema is the de facto one of Ant and Maven Surefire, which Jenkins,
// GitLab, GitHub test reporters and others read.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Cases     []junitCase `xml:"testcase"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes every outcome as one JUnit XML document.
func writeJUnit(w io.Writer, outs []check.Outcome, p *check.Policy, info Run) {
	suite := junitSuite{Name: "tlcheck " + info.Command}
	for i := range outs {
		o := &outs[i]
		c := junitCase{Name: o.File, Classname: "tlcheck." + info.Command}
		var report bytes.Buffer
		if o.Err == nil {
			writeOutcome(&report, o, p, false)
		}
		switch o.Status(p) {
		case check.Unreadable:
			c.Error = &junitProblem{Message: safe(o.Err.Error()), Type: "unreadable", Text: safe(o.Err.Error())}
			suite.Errors++
		case check.Fail:
			c.Failure = &junitProblem{Message: strings.Join(o.FailureReasons(p), ", "), Type: "tlcheck." + info.Command, Text: report.String()}
			suite.Failures++
		default:
			c.SystemOut = report.String()
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	if len(info.Notes) > 0 {
		suite.SystemOut = strings.Join(info.Notes, "\n") + "\n"
	}
	doc := junitSuites{Name: "tlcheck", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Suites: []junitSuite{suite}}

	io.WriteString(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	enc.Encode(doc) // always encodes; w's errors surface at Flush
	io.WriteString(w, "\n")
}
