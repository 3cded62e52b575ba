package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A baseline is an earlier revision of tlcheck, built from the repository's
// history and timed in the same run as the working tree's, taking turns
// with it: "unchanged or better" is then a ratio measured on one machine at
// one time, not a comparison with a figure another machine wrote.
type baseline struct {
	Rev     string // as given to -baseline
	Commit  string // its abbreviated commit hash
	tree    string // the revision's files, extracted
	tlcheck string // its tlcheck, built with its own default.pgo
	bench   string // its cmd/tlcheck test binary, for BenchmarkJSONL
}

// buildBaseline extracts rev's tree into work (git archive, so no worktree
// is registered and the checkout is left alone) and builds its tlcheck and
// its cmd/tlcheck test binary.
func buildBaseline(rev, work string) (*baseline, error) {
	commit, err := exec.Command("git", "rev-parse", "--short", "--verify", rev+"^{commit}").Output()
	if err != nil {
		return nil, fmt.Errorf("-baseline %s: not a commit of this repository: %w", rev, err)
	}
	b := &baseline{
		Rev:     rev,
		Commit:  strings.TrimSpace(string(commit)),
		tree:    filepath.Join(work, "baseline"),
		tlcheck: filepath.Join(work, "tlcheck-baseline"),
		bench:   filepath.Join(work, "bench-baseline"),
	}
	if err := extract(b.Commit, b.tree); err != nil {
		return nil, fmt.Errorf("-baseline %s: %w", rev, err)
	}
	build := command("go", "build", "-o", b.tlcheck, "./cmd/tlcheck")
	build.Dir = b.tree
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building the baseline's tlcheck: %w", err)
	}
	if err := buildBench(b.tree, b.bench); err != nil {
		return nil, fmt.Errorf("building the baseline's benchmark: %w", err)
	}
	return b, nil
}

// buildBench compiles cmd/tlcheck's tests in the tree at root into bin, so
// that the current tree's and the baseline's benchmarks can take turns
// without a compile between them.
func buildBench(root, bin string) error {
	cmd := command("go", "test", "-c", "-o", bin, "./cmd/tlcheck")
	cmd.Dir = root
	return cmd.Run()
}

// extract writes the files of commit into dir.
func extract(commit, dir string) error {
	cmd := exec.Command("git", "archive", "--format=tar", commit)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	untarErr := untar(out, dir)
	if untarErr != nil {
		io.Copy(io.Discard, out) // let git finish writing before Wait
	}
	return errors.Join(untarErr, cmd.Wait())
}

// untar writes the regular files and directories of a git archive under
// dir; git archive writes no links outside the tree, and any other entry
// (a symlink, a submodule) is skipped, since building needs none.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("archive entry %q leaves the tree", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(name, tr, os.FileMode(h.Mode).Perm()); err != nil {
				return err
			}
		}
	}
}

func writeFile(name string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	return errors.Join(err, f.Close())
}
