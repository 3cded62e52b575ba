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

const explainUsage = `usage: tlcheck explain [flags] SNAPSHOT

  tlcheck explain [--recorded CONF] [--setting CONF]... [--capacity BYTES]
                  [--format text|json] SNAPSHOT

Says why a PyTorch program ran out of device memory, from a memory
snapshot ("-": standard input) taken at the error (its last oom entry):
the request, what the device had free, allocated against reserved bytes,
the cache's free bytes and largest free block by pool and stream, and the
sites that held the most. Then what if: the snapshot's allocations and
frees replayed through impl/gpu's caching allocator under each setting,
with its peak reserved bytes and whether the request would have fit. The
replay under the recorded setting is first held to the snapshot's own
segments (VALIDATED, or NOT VALIDATED and where). A snapshot without an
oom entry gets the what-if peaks alone. Package explain says how.

  --recorded CONF  the PYTORCH_CUDA_ALLOC_CONF the snapshot was recorded
                   under (default: the snapshot's allocator_settings, or
                   PyTorch's default for a snapshot without them)
  --setting CONF   a setting to try, as PYTORCH_CUDA_ALLOC_CONF writes it
                   ("max_split_size_mb:128", "default"); may be repeated;
                   default: the default, max_split_size_mb of 32, 128, 512
                   and 2048, expandable_segments:True, and the options
                   impl/gpu does not model, listed as such
                   (roundup_power2_divisions, garbage_collection_threshold)
  --capacity BYTES the bytes the process could reserve; default: what it
                   had reserved at the error plus the device's free bytes,
                   or, without an error, no limit
  --format F       text (the default) or json (one object)
  --json           the same as --format json

Exit status: 0 explained, 2 bad usage or unreadable input.
`

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
