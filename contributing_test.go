// Package tlcheck_test tests the documents at the root of the repository
// against the code they describe.
package tlcheck_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// quoted is a backquoted span of Markdown.
	quoted = regexp.MustCompile("`([^`]+)`")
	// repoPath is a span that names a file or folder of the repository:
	// lower-case words joined by slashes, with a slash or a file's
	// extension (check/, properties/calls.go, faultrows.go).
	repoPath = regexp.MustCompile(`^[a-z][a-z0-9_.-]*(/[a-z0-9_.-]*)*$`)
	fileExt  = regexp.MustCompile(`\.(go|md|json|jsonl)$`)
	// testName is a Go test a document says fails.
	testName = regexp.MustCompile(`\b(Test[A-Z][A-Za-z0-9_]*)\b`)
	testFunc = regexp.MustCompile(`(?m)^func (Test[A-Z][A-Za-z0-9_]*)\(`)
)

// TestContributingNamesWhatExists: every file or folder CONTRIBUTING.md
// names in backquotes exists (a path as written from the root, a bare
// file name somewhere in the repository), and every test it says fails
// when a step is left out is a test of the repository. A file moved or a
// test renamed fails here until the steps say where they went.
func TestContributingNamesWhatExists(t *testing.T) {
	doc, err := os.ReadFile("CONTRIBUTING.md")
	if err != nil {
		t.Fatal(err)
	}
	bases, tests := repoFiles(t)
	var paths int
	for _, m := range quoted.FindAllStringSubmatch(string(doc), -1) {
		p := m[1]
		if !repoPath.MatchString(p) || !strings.Contains(p, "/") && !fileExt.MatchString(p) {
			continue
		}
		paths++
		if strings.Contains(p, "/") {
			if _, err := os.Stat(filepath.FromSlash(strings.TrimSuffix(p, "/"))); err != nil {
				t.Errorf("CONTRIBUTING.md names `%s`: %v", p, err)
			}
		} else if !bases[p] {
			t.Errorf("CONTRIBUTING.md names `%s`: no file of the repository has that name", p)
		}
	}
	var named int
	for _, m := range testName.FindAllStringSubmatch(string(doc), -1) {
		named++
		if !tests[m[1]] {
			t.Errorf("CONTRIBUTING.md names %s: no test of the repository has that name", m[1])
		}
	}
	// The check must see what it checks: the steps name dozens of each.
	if paths < 10 || named < 10 {
		t.Fatalf("found %d paths and %d test names in CONTRIBUTING.md; the patterns no longer match it", paths, named)
	}
}

// repoFiles returns the base name of every file of the repository and the
// name of every test its _test.go files declare.
func repoFiles(t *testing.T) (bases, tests map[string]bool) {
	t.Helper()
	bases, tests = map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // .git and the like
			}
			return nil
		}
		bases[d.Name()] = true
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			tests[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bases, tests
}

// commandLines bounds the non-test Go lines of cmd/tlcheck: the command
// parses flags, reads the environment and turns outcomes into exit codes
// over the packages named in CONTRIBUTING's "Where code goes"; a
// pipeline written in package main instead (as the fuzz command's was,
// before package properties/harness and properties/execfuzz took it) makes
// it grow. The usage texts are files of their own (cmd/tlcheck/usage),
// gathered by cmd/tlcheck/README.md. What stays besides flags and
// printing is the HTML page's OOM section (pageextras.go), which joins
// explain (over impl/gpu) to export's page (over the model) and so may
// live only in a command.
const commandLines = 1500

// TestCommandIsThin: cmd/tlcheck holds at most commandLines non-test lines.
func TestCommandIsThin(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("cmd", "tlcheck", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(src), "\n")
	}
	if lines == 0 {
		t.Fatal("no Go file in cmd/tlcheck: the path has moved")
	}
	if lines > commandLines {
		t.Errorf("cmd/tlcheck has %d non-test lines, more than %d: move what a user might call from Go into a package named for it (CONTRIBUTING.md, Where code goes)", lines, commandLines)
	}
}
