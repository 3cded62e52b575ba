package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/report"
	"github.com/tlcheck/tlcheck/traces/mtrace"
)

// What replay and gate share: the output format, which findings fail the
// run, and the verdict on each file under those flags.

// checkOptions are the flags of replay and gate that decide what fails
// and how the verdict is written.
type checkOptions struct {
	format       report.Format
	json         bool // --json: the alias of --format json
	failOn       check.KindSet
	requireEnd   bool
	suppressions listFlag
}

// register adds the shared flags to fs.
func (o *checkOptions) register(fs *flag.FlagSet) {
	fs.StringVar((*string)(&o.format), "format", "", "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.Var(&o.failOn, "fail-on", "")
	fs.BoolVar(&o.requireEnd, "require-end", false, "")
	fs.Var(&o.suppressions, "suppressions", "")
}

// resolve settles the format once the flags are parsed: --json is
// --format json, and a contradiction between the two is bad usage.
func (o *checkOptions) resolve() error {
	switch {
	case o.json && o.format != "" && o.format != report.JSON:
		return fmt.Errorf("--json and --format %s contradict each other", o.format)
	case o.json:
		o.format = report.JSON
	case o.format == "":
		o.format = report.Text
	}
	if _, err := report.ParseFormat(string(o.format)); err != nil {
		return fmt.Errorf("--format %w", err)
	}
	return nil
}

// listFlag is a flag that may be given several times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// parseInterleaved parses fs's flags, which may come before, between or
// after the operands; "--" ends the flags. It returns the operands.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard) // the commands print their own usage
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(operands, rest...), nil // everything after "--" is an operand
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// policy loads the suppression files and makes the run's policy.
func (o *checkOptions) policy() (*check.Policy, error) {
	rules, err := check.LoadSuppressions(o.suppressions)
	if err != nil {
		return nil, fmt.Errorf("--suppressions: %w", err)
	}
	return &check.Policy{FailOn: o.failOn, RequireEnd: o.requireEnd, Rules: rules}, nil
}

// inputOptions says how replay and gate open their files. It reads
// --binary's program once for all the files, and before any: a binary
// without line information fails the command, not each file.
func inputOptions(e *env, command, from, binary string) (input.Options, bool) {
	opts := input.Options{Format: input.Format(from), Stdin: e.stdin}
	if binary != "" {
		syms, err := mtrace.NewSymbols(binary)
		if err != nil {
			fmt.Fprintf(e.stderr, "tlcheck %s: --binary: %v\n", command, err)
			return opts, false
		}
		opts.Symbols = syms
	}
	return opts, true
}

// checkFile checks one file as check.File does, and says on standard
// error why it could not be read, or that p fails it for want of an end.
func checkFile(e *env, name string, in input.Options, p *check.Policy, max int) check.Outcome {
	o := check.File(name, in, p, max)
	if o.Err != nil {
		fmt.Fprintf(e.stderr, "tlcheck: %v\n", o.Err)
	}
	if o.IncompleteFails(p) {
		fmt.Fprintf(e.stderr, "tlcheck: %s\n", check.RequireEndMessage(name))
	}
	return o
}

// checkFrom checks --from's value.
func checkFrom(from string) error {
	if _, err := input.ParseFormat(from); err != nil {
		return fmt.Errorf("--from %w", err)
	}
	return nil
}
