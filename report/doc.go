// Package report writes the outcomes of a check (package check) for people
// and machines: the human report in the style of AddressSanitizer, the
// contract's JSON report, SARIF 2.1.0 for code-scanning systems and JUnit
// XML for CI test tabs.
//
//	report.Write(os.Stdout, report.Text, outs, p, report.Run{Command: "replay"})
//
// The contract:
//
//   - A writer renders the value it is given and decides nothing: which
//     findings fail, are suppressed or known to a baseline is the
//     Outcome's and the Policy's (package check). Under a gate (Run's
//     Command "gate"), each format says how each trace stands against the
//     baseline, and the text report ends with the gate's verdict.
//   - Text and JSON stream (File writes one outcome); SARIF and JUnit are
//     one document each, written by Write from every outcome.
//   - The JSON report of one trace is the contract's (traces/FORMAT.md):
//     empty lists are [], never null; the fields the flags add (file,
//     suppressed, unlisted, leak_sites, leak_suspects and a gate's) are
//     omitted where they say nothing.
//   - An outcome's leak suspects (check.Outcome.Suspects, where the
//     policy searched) are listed in every format: a LEAK SUSPECT line
//     each, "leak_suspects" in JSON, a result of the rule leak-suspect in
//     SARIF (an error where they fail the run, else a warning).
//   - A writer's only errors are the writer's own; they surface where the
//     caller flushes (the writers write to a bufio.Writer or a buffer).
package report
