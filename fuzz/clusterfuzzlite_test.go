package fuzz

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestClusterFuzzLiteBuildsEveryTarget keeps .clusterfuzzlite/build.sh in
// step with the code: it builds every native fuzz target of the module
// (every func FuzzX(f *testing.F) in a _test.go file of the normal build:
// not the calibration targets, behind the tag tlcheck_calibrate), each once, from the
// package that declares it, and nothing else; that no two targets share a
// function name where one's package folder holds the other's, which the
// builder's compile_native_go_fuzzer cannot tell apart (it greps the
// package's whole folder tree, subfolders included, for the name and
// refuses a name found in two files); and that each target is in its
// package, not an external _test package, which go-118-fuzz-build cannot
// build, nor a file that uses testing.TB or testing.B, which its testing
// package lacks; and that no compiled file but doc.go in a target's folder tree
// names it, which build.sh refuses. Building them is .clusterfuzzlite/test.sh's work (and CI's); it
// needs clang and the network.
func TestClusterFuzzLiteBuildsEveryTarget(t *testing.T) {
	const module = "github.com/tlcheck/tlcheck"
	script, err := os.ReadFile(filepath.Join("..", ".clusterfuzzlite", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^build_target \$m(\S*) (\S+) (\S+)$`)
	var built, names []string
	for _, m := range line.FindAllStringSubmatch(string(script), -1) {
		built = append(built, module+m[1]+" "+m[2])
		names = append(names, m[3])
	}

	var targets []string
	dirs := map[string][]string{}   // a target's name: the folders declaring it
	compiled := map[string]string{} // the text of each compiled file but doc.go, by path
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		// A file the normal build leaves out (a build tag such as
		// tlcheck_calibrate's) is no part of a libFuzzer build either.
		if ok, err := build.Default.MatchFile(filepath.Dir(path), d.Name()); err != nil || !ok {
			return err
		}
		if !strings.HasSuffix(path, "_test.go") {
			if d.Name() != "doc.go" {
				text, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				compiled[filepath.ToSlash(path)] = string(text)
			}
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && isFuzzTarget(fn) {
				pkg := module + strings.TrimPrefix(filepath.ToSlash(filepath.Dir(path)), "..")
				targets = append(targets, pkg+" "+fn.Name.Name)
				if text, err := os.ReadFile(path); err == nil && (strings.Contains(string(text), "testing.TB") ||
					strings.Contains(string(text), "*testing.B")) {
					t.Errorf("%s: fuzz target %s's file uses testing.TB or testing.B, which go-118-fuzz-build's "+
						"testing package lacks", path, fn.Name.Name)
				}
				if strings.HasSuffix(f.Name.Name, "_test") {
					t.Errorf("%s: fuzz target %s is in the external test package %s, which go-118-fuzz-build "+
						"cannot build; move it into package %s", path, fn.Name.Name, f.Name.Name, strings.TrimSuffix(f.Name.Name, "_test"))
				}
				dirs[fn.Name.Name] = append(dirs[fn.Name.Name], filepath.ToSlash(filepath.Dir(path)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	slices.Sort(built)
	slices.Sort(targets)
	if len(targets) == 0 {
		t.Fatal("found no fuzz targets in the module")
	}
	if !slices.Equal(built, targets) {
		t.Errorf("build.sh builds (package, function):\n  %s\nthe module's fuzz targets are:\n  %s",
			strings.Join(built, "\n  "), strings.Join(targets, "\n  "))
	}
	for name, ds := range dirs {
		if clash := nestedClash(ds); clash != "" {
			t.Errorf("fuzz target %s is declared in %s: compile_native_go_fuzzer greps a package's folder tree "+
				"for the name and finds both; give one its own name", name, clash)
		}
		// build.sh moves aside the test files, doc.go and notes that name
		// a target while it builds; a compiled file it refuses.
		for path, text := range compiled {
			for _, d := range ds {
				if within(filepath.ToSlash(filepath.Dir(path)), d) && strings.Contains(text, name) {
					t.Errorf("%s names fuzz target %s and is compiled into its libFuzzer build, "+
						"where compile_native_go_fuzzer would find the name twice; reword it", path, name)
				}
			}
		}
	}
	slices.Sort(names)
	if len(slices.Compact(names)) != len(built) {
		t.Errorf("build.sh gives two targets one output name: %v", names)
	}
}

// nestedClash returns "A and B" for two of the folders in ds of which one
// holds the other (or they are one), or "" if there are none.
func nestedClash(ds []string) string {
	for i, a := range ds {
		for _, b := range ds[i+1:] {
			if within(a, b) || within(b, a) {
				return a + " and " + b
			}
		}
	}
	return ""
}

// within reports whether folder sub is dir or lies under it.
func within(sub, dir string) bool {
	return sub == dir || strings.HasPrefix(sub, dir+"/")
}

// isFuzzTarget reports whether fn is func FuzzX(name *testing.F).
func isFuzzTarget(fn *ast.FuncDecl) bool {
	if !strings.HasPrefix(fn.Name.Name, "Fuzz") || len(fn.Type.Params.List) != 1 {
		return false
	}
	star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testing" && sel.Sel.Name == "F"
}
