package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

func runExplain(e *env, args []string) int {
	var opts explain.Options
	var recorded, format string
	var settings listFlag
	var asJSON bool
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.StringVar(&recorded, "recorded", "", "")
	fs.Var(&settings, "setting", "")
	fs.Uint64Var(&opts.Capacity, "capacity", 0, "")
	fs.StringVar(&format, "format", "text", "")
	fs.BoolVar(&asJSON, "json", false, "")
	files, err := parseInterleaved(fs, args)
	if err == nil {
		err = parseExplainArgs(&opts, recorded, settings, &format, asJSON, files)
	}
	if code, ok := badFlags(e, "explain", explainUsage, err); !ok {
		return code
	}
	name := files[0]
	var in io.Reader = e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "tlcheck: %v\n", err)
			return exitInput
		}
		defer f.Close()
		in = f
	}
	r, err := torchsnap.NewReaderLimits(in, torchsnap.Limits{Stacks: true})
	if err == nil {
		var ex *explain.Explanation
		if ex, err = explain.Explain(r, opts); err == nil {
			out := bufio.NewWriter(e.stdout)
			if format == "json" {
				err = explain.WriteJSON(out, ex)
			} else {
				err = explain.WriteText(out, ex)
			}
			if err = errors.Join(err, out.Flush()); err != nil {
				fmt.Fprintf(e.stderr, "tlcheck: writing the explanation: %v\n", err)
				return exitInput
			}
			return exitClean
		}
	}
	fmt.Fprintf(e.stderr, "tlcheck: %s: %v\n", name, err)
	return exitInput
}

func parseExplainArgs(opts *explain.Options, recorded string, settings []string, format *string, asJSON bool, files []string) error {
	if recorded != "" {
		s, err := explain.ParseSetting(recorded)
		if err != nil {
			return fmt.Errorf("--recorded: %w", err)
		}
		opts.Recorded = &s
	}
	for _, c := range settings {
		s, err := explain.ParseSetting(c)
		if err != nil {
			return fmt.Errorf("--setting: %w", err)
		}
		opts.Settings = append(opts.Settings, s)
	}
	if asJSON {
		*format = "json"
	}
	switch {
	case *format != "text" && *format != "json":
		return fmt.Errorf("--format %s: want text or json", strconv.Quote(safetext.Clip(*format)))
	case len(files) == 0:
		return errors.New("no snapshot to explain")
	case len(files) > 1:
		return fmt.Errorf("one snapshot at a time, not %d", len(files))
	}
	return nil
}
