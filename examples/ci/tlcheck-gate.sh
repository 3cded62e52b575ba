#!/usr/bin/env bash
# The steps of the example CI gate (tlcheck-gate.yml), as one script that
# runs anywhere: CI calls it, and ci_test.go runs it offline on every
# `go test ./...`.
#
#   examples/ci/tlcheck-gate.sh OUT [flags for the traced program]
#
# 1. builds tlcheck into OUT (unless $TLCHECK names a built one);
# 2. runs the program under test, which writes its traces into OUT/traces;
# 3. gates the traces against the committed baseline, writing
#    OUT/tlcheck.sarif (for code scanning) and OUT/tlcheck-junit.xml (for
#    the test tab), and the human report on standard output.
#
# The exit status is the gate's: 0 nothing beyond the baseline, 1 a new
# finding, growth beyond the tolerance or a trace without end, 2 bad input.
# With TLCHECK_UPDATE=1 the baseline is rewritten from this run instead
# (review the diff, commit it).
set -euo pipefail

out=${1:?usage: tlcheck-gate.sh OUT [flags for the traced program]}
shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/traces"
out=$(cd "$out" && pwd)

baseline=$repo/examples/ci/tlcheck-baseline.json
suppressions=$repo/examples/ci/tlcheck.supp
# Peak live bytes may move a little with allocator changes; leaks may not
# grow at all from 0, whatever the percentage.
tolerance=${TLCHECK_TOLERANCE:-10%}

tlcheck=${TLCHECK:-}
if [[ -z $tlcheck ]]; then
	tlcheck=$out/tlcheck
	(cd "$repo" && go build -o "$tlcheck" ./cmd/tlcheck)
fi

# The program under test writes its traces. A real project runs its own
# test suite here, with its runtime's trace recording switched on.
rm -f "$out"/traces/*.jsonl
(cd "$repo" && go run ./examples/ci/traced -out "$out/traces" "$@")

# Traces are named in the baseline by the path given on the command line:
# run from the traces' folder, so that the names do not depend on OUT.
cd "$out/traces"
traces=(*.jsonl)
gate=("$tlcheck" gate --baseline "$baseline" --suppressions "$suppressions"
	--tolerance "$tolerance" --require-end)

if [[ ${TLCHECK_UPDATE:-} == 1 ]]; then
	exec "${gate[@]}" --update "${traces[@]}"
fi

# The machine reports first, so that they exist whatever the verdict (the
# workflow uploads them even when the gate fails); exit 2 stops here.
rc=0
"${gate[@]}" --format sarif "${traces[@]}" >"$out/tlcheck.sarif" || rc=$?
if ((rc == 2)); then exit 2; fi
rc=0
"${gate[@]}" --format junit "${traces[@]}" >"$out/tlcheck-junit.xml" || rc=$?
if ((rc == 2)); then exit 2; fi
rc=0
"${gate[@]}" "${traces[@]}" || rc=$?
exit "$rc"
