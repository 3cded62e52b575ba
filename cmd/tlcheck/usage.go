package main

import _ "embed" // the usage texts

// The subcommands' usage texts, one file each under usage/: what 'tlcheck
// help COMMAND' prints on standard output and 'tlcheck COMMAND -h' on
// standard error, and whose first line a usage error quotes. README.md
// in this directory gathers them all; TestUsageReference fails when it is
// stale, and go generate rewrites it.
//
//go:generate go test -run TestUsageReference -update
var (
	//go:embed usage/replay.txt
	replayUsage string
	//go:embed usage/gate.txt
	gateUsage string
	//go:embed usage/export.txt
	exportUsage string
	//go:embed usage/suspects.txt
	suspectsUsage string
	//go:embed usage/explain.txt
	explainUsage string
	//go:embed usage/faults.txt
	faultsUsage string
	//go:embed usage/selftest.txt
	selftestUsage string
	//go:embed usage/version.txt
	versionUsage string
	//go:embed usage/help.txt
	helpUsage string
	//go:embed usage/fuzzexec.txt
	fuzzExecUsage string
	//go:embed usage/fuzz.txt
	fuzzOwnUsage string

	// fuzzUsage is fuzz's own usage, then fuzz --exec's.
	fuzzUsage = fuzzOwnUsage + "\n" + fuzzExecUsage
)
