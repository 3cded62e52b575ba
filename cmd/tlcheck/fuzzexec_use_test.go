package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
)

func TestFuzzExecMisuseAndStepsFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		misuse drive.Misuse
		steps  int
	}{
		{[]string{"--exec", "d"}, drive.MisuseAsHello, 0},
		{[]string{"--exec", "d", "--misuse"}, drive.MisuseOn, 0},
		{[]string{"--exec", "d", "--misuse=false", "--steps", "5000"}, drive.MisuseOff, 5000},
	} {
		opts, err := parseFuzzExecArgs(tc.args)
		if err != nil || opts.Misuse != tc.misuse || opts.Steps != tc.steps {
			t.Errorf("%q: misuse %v, steps %d, %v; want %v, %d", tc.args, opts.Misuse, opts.Steps, err, tc.misuse, tc.steps)
		}
	}
	if code, out, errOut := tlcheck(false, "fuzz", "--exec", "true", "--steps", "-1"); code != exitInput || !strings.Contains(out+errOut, "--steps") {
		t.Errorf("--steps -1: exit %d\n%s%s", code, out, errOut)
	}
}

// reuseLater is a driver, in sh, whose answers depend on the programs it
// ran before: in its first program every alloc gets an address of its
// own; from the second on, a freed address is handed out again. So a
// calls file replayed in a fresh driver and then again in it gets two
// patterns of addresses.
const reuseLater = `#!/bin/sh
echo '{"protocol":"tlcheck-drive","version":1,"layers":[2],"source":"reuse-later"}'
resets=0; next=4096; last=0
while IFS= read -r line; do
  id=${line#*\"id\":}; id=${id%%,*}
  case $line in
  *'"reset"'*) resets=$((resets+1)); ev='' ;;
  *'"scope_enter"'*) ev='{"op":"scope_enter"}' ;;
  *'"alloc"'*)
    if [ "$resets" -ge 2 ] && [ "$last" -ne 0 ]; then a=$last; else a=$next; next=$((next+256)); fi
    ev="{\"op\":\"alloc\",\"addr\":\"$(printf '0x%x' $a)\",\"size\":16}"; cur=$a ;;
  *'"scope_exit"'*) ev="{\"op\":\"scope_exit\"},{\"op\":\"free\",\"addr\":\"$(printf '0x%x' $cur)\"}"; last=$cur ;;
  *'"end"'*) ev='{"op":"end"}' ;;
  esac
  echo "{\"id\":$id,\"events\":[$ev],\"outcome\":\"done\"}"
done
`

// TestFuzzExecReplayDeterminism: --replay of a calls file that gives no
// failure says whether the driver is deterministic: the C runtime is (its
// addresses move between processes, which the comparison allows); a
// driver that hands out addresses otherwise once it has run a program is
// not, and that is a finding.
func TestFuzzExecReplayDeterminism(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "two-scopes.calls.jsonl")
	text := `{"op":"scope_enter"}
{"op":"alloc","handle":1,"size":16}
{"op":"scope_exit"}
{"op":"scope_enter"}
{"op":"alloc","handle":2,"size":16}
{"op":"scope_exit"}
{"op":"end"}
`
	if err := os.WriteFile(calls, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("sh"); err == nil {
		script := filepath.Join(dir, "reuse-later.sh")
		if err := os.WriteFile(script, []byte(reuseLater), 0o755); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := tlcheck(false, "fuzz", "--exec", shellQuote(script), "--replay", calls)
		if code != exitViolation || !strings.Contains(out, "NOT DETERMINISTIC") || !strings.Contains(out, "at call 4") {
			t.Errorf("a driver that reuses addresses from its second program on: exit %d, want 1 and NOT DETERMINISTIC at call 4\n%s%s", code, out, errOut)
		}
	}
	bin := cDriver(t)
	code, out, errOut := tlcheck(false, "fuzz", "--exec", shellQuote(bin), "--replay", calls)
	if code != exitClean || !strings.Contains(out, "deterministic: the calls run twice in one driver process, and in another fresh driver, got the same answers") {
		t.Errorf("the C runtime: exit %d, want 0 and deterministic\n%s%s", code, out, errOut)
	}
}

var checkTrace = regexp.MustCompile(`(?m)^check the trace: tlcheck replay (?:--suppressions (\S+) )?(\S+)$`)

// TestFuzzExecTraceAgrees: the trace written beside a counterexample, with
// the suppressions written beside it where the run found violations the
// program explained (misuse the runtime refused), replays to what the run
// reported: its failure's kind first, and none of the violations the run
// found explained by a refusal.
func TestFuzzExecTraceAgrees(t *testing.T) {
	bin := cDriver(t)
	for _, fault := range []string{"param-reregister-no-release-old", "stale-record-not-purged"} {
		dir := t.TempDir()
		code, out, errOut := tlcheck(false, "fuzz", "--exec", shellQuote(bin)+" --faults="+fault, "--seed", "3", "--time", "20s", "--out", dir)
		m := checkTrace.FindStringSubmatch(out)
		if code != exitViolation || m == nil {
			t.Fatalf("%s: exit %d, no check-the-trace line\n%s%s", fault, code, out, errOut)
		}
		what := strings.Fields(out[strings.Index(out, "\n")+1:])[0] // "leak at call 4: ..."
		args := []string{"replay", m[2]}
		if m[1] != "" {
			args = []string{"replay", "--suppressions", m[1], m[2]}
		}
		code, rout, rerr := tlcheck(false, args...)
		var errs []string
		for _, l := range strings.Split(rout, "\n") {
			if strings.HasPrefix(l, "ERROR: ") {
				errs = append(errs, l)
			}
		}
		refused := slices.ContainsFunc(errs, func(l string) bool { return strings.Contains(l, "refused)") })
		if code != exitViolation || len(errs) == 0 || !strings.HasPrefix(errs[0], "ERROR: "+what+" at event") || refused {
			t.Errorf("%s: the run failed with %s; %q: exit %d\n%s%s", fault, what, args, code, rout, rerr)
		}
	}
}
