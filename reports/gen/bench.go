package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

// benchResult is BenchmarkJSONL's figures, medians over its runs.
type benchResult struct {
	Decode, Replay float64 // events/s
	Ratio          float64 // replay time / decode time, on one goroutine: the CPU cost
	Command        float64 // replay as the command runs it (reading ahead on a goroutine) / decode time
	Raw            string  // the result lines, as go test printed them
}

// benchJSONL runs BenchmarkJSONL from each of the compiled cmd/tlcheck
// test binaries, one iteration of -count at a time, the binaries taking
// turns, count rounds: a busy moment of the machine falls on all alike.
func benchJSONL(count int, bins ...string) ([]benchResult, error) {
	outs := make([][]byte, len(bins))
	for range count {
		for i, bin := range bins {
			out, err := command(bin, "-test.run", "^$", "-test.bench", "^BenchmarkJSONL$", "-test.count", "1").Output()
			if err != nil {
				os.Stderr.Write(out)
				return nil, fmt.Errorf("%s -test.bench: %w", filepath.Base(bin), err)
			}
			outs[i] = append(outs[i], out...)
		}
	}
	rs := make([]benchResult, len(bins))
	for i, out := range outs {
		var err error
		if rs[i], err = parseBench(out); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(bins[i]), err)
		}
	}
	return rs, nil
}

// parseBench reads the medians of BenchmarkJSONL's result lines.
func parseBench(out []byte) (benchResult, error) {
	var r benchResult
	line := regexp.MustCompile(`(?m)^BenchmarkJSONL\S*\s.*$`)
	metric := regexp.MustCompile(`([0-9.e+]+) (decode-events/s|replay-events/s|replay/decode|command/decode)`)
	values := map[string][]float64{}
	var lines [][]byte
	for _, l := range line.FindAll(out, -1) {
		lines = append(lines, l)
		for _, m := range metric.FindAllSubmatch(l, -1) {
			v, err := strconv.ParseFloat(string(m[1]), 64)
			if err != nil {
				return r, fmt.Errorf("bad benchmark line %q", l)
			}
			values[string(m[2])] = append(values[string(m[2])], v)
		}
	}
	for _, k := range []string{"decode-events/s", "replay-events/s", "replay/decode", "command/decode"} {
		if len(values[k]) != len(lines) || len(lines) == 0 {
			return r, fmt.Errorf("no %s in every benchmark line:\n%s", k, out)
		}
	}
	r.Decode = median(values["decode-events/s"])
	r.Replay = median(values["replay-events/s"])
	r.Ratio = median(values["replay/decode"])
	r.Command = median(values["command/decode"])
	r.Raw = string(bytes.Join(lines, []byte("\n")))
	return r, nil
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}
