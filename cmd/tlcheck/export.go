package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/internal/safetext"
)

// exportOptions are export's flags.
type exportOptions struct {
	format string // "perfetto", "pprof", "html" or "torch-snapshot"
	out    string // "" for standard output
	from   string // "auto", "trace", "mtrace" or "torch-snapshot"
}

func runExport(e *env, args []string) int {
	opts, file, err := parseExportArgs(args)
	if code, ok := badFlags(e, "export", exportUsage, err); !ok {
		return code
	}
	if opts.out == "-" {
		opts.out = "" // "-" is standard output, as it is standard input for the trace
	}
	if opts.out == "" && export.Format(opts.format).Binary() && e.isTTY != nil && e.isTTY(e.stdout) {
		fmt.Fprintf(e.stderr, "tlcheck export: a %s export is binary: name a file with --out, or redirect standard output\n", opts.format)
		return exitInput
	}
	if opts.out != "" && file != "-" && atomicfile.SameFile(file, opts.out) {
		fmt.Fprintf(e.stderr, "tlcheck export: --out %s is the trace being exported\n", opts.out)
		return exitInput
	}

	if opts.out == "" {
		code, _ := exportTo(e, e.stdout, file, opts)
		return code
	}
	w, err := atomicfile.NewWriter(opts.out)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck export: --out: %v\n", err)
		return exitInput
	}
	defer w.Abort() // a no-op once committed
	code, ok := exportTo(e, w, file, opts)
	if !ok {
		return code // the target stays as it was
	}
	if err := w.Commit(); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck export: --out: %v\n", err)
		return exitInput
	}
	return code
}

// exportTo exports file to dst and returns the exit code; ok is false when
// nothing worth keeping was written (an unreadable input, a failed write).
func exportTo(e *env, dst io.Writer, file string, opts exportOptions) (code int, ok bool) {
	inOpts := input.Options{Format: input.Format(opts.from), Stdin: e.stdin}
	var src *input.Reread
	if export.Format(opts.format) == export.HTML {
		// The page's analyses may read the input again: standard input
		// is held in memory. Stacks give the suspects theirs.
		var err error
		if src, err = input.NewReread(file, e.stdin); err != nil {
			fmt.Fprintf(e.stderr, "tlcheck: %v\n", err)
			return exitInput, false
		}
		inOpts = src.Options(inOpts)
		inOpts.Stacks = true
	}
	in, err := input.Open(file, inOpts)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck: %v\n", err)
		return exitInput, false
	}
	defer in.Close()

	xopts := export.Options{Name: filepath.Base(in.Name()), Snapshot: in.Format() == input.TorchSnapshot}
	if src != nil {
		xopts.Page = &export.PageExtras{}
		xopts.Watch = check.PageWatch(in, xopts.Page)
		if len(in.OOMs()) > 0 {
			if xopts.Page.OOM, err = pageOOM(src); err != nil {
				fmt.Fprintf(e.stderr, "tlcheck: %v\n", err)
				return exitInput, false
			}
		}
	}
	sum, err := export.Write(dst, export.Format(opts.format), in, xopts)
	var werr *export.WriteError
	switch {
	case errors.As(err, &werr):
		fmt.Fprintf(e.stderr, "tlcheck export: writing the %s export: %v\n", opts.format, werr.Err)
		return exitInput, false
	case err != nil:
		fmt.Fprintf(e.stderr, "tlcheck: %v\n", in.Explain(err))
		return exitInput, false
	}
	if sum.Violations > 0 {
		// Exit 1 says the trace is wrong, not the export: say so, and why.
		them := "them"
		if sum.Violations == 1 {
			them = "it"
		}
		fmt.Fprintf(e.stderr, "tlcheck export: %s: %s (%s): exported; tlcheck replay lists %s\n",
			in.Name(), plural.Count(sum.Violations, "violation"), sum.Kinds(), them)
		return exitViolation, true
	}
	return exitClean, true
}

// parseExportArgs parses export's flags, which may come before or after
// the trace; "--" ends the flags.
func parseExportArgs(args []string) (exportOptions, string, error) {
	opts := exportOptions{from: "auto"}
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.StringVar(&opts.format, "format", "", "")
	fs.StringVar(&opts.out, "out", "", "")
	fs.StringVar(&opts.from, "from", "auto", "")
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return opts, "", err
	}
	switch {
	case opts.format == "":
		return opts, "", errors.New("--format is required: perfetto, pprof, html or torch-snapshot")
	case !slices.Contains(export.Formats(), export.Format(opts.format)):
		return opts, "", fmt.Errorf("--format %q: want perfetto, pprof, html or torch-snapshot", safetext.Clip(opts.format))
	case checkFrom(opts.from) != nil:
		return opts, "", checkFrom(opts.from)
	case len(files) == 0:
		return opts, "", errors.New("no trace to export")
	case len(files) > 1:
		return opts, "", fmt.Errorf("one trace at a time, not %d", len(files))
	}
	return opts, files[0], nil
}
