// Package ci is an example of tlcheck in continuous integration: a GitHub
// Actions workflow (tlcheck-gate.yml) whose steps are one script
// (tlcheck-gate.sh), a program that writes traces (traced/), the committed
// baseline its findings are gated against (tlcheck-baseline.json) and a
// suppression file (tlcheck.supp). The package's test runs the script
// offline, as CI would, and shows that the gate fails on a new bug.
package ci
