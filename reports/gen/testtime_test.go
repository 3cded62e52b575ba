package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLongPackages finds the packages the long step runs again: drive,
// whose 2,000-program comparisons are long proofs, is one.
func TestLongPackages(t *testing.T) {
	pkgs, err := longPackages()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkgs, module+"/drive") {
		t.Fatalf("long packages %v: drive is not among them", pkgs)
	}
	if slices.Contains(pkgs, module+"/traces") {
		t.Fatalf("long packages %v: traces reads no TLCHECK_LONG", pkgs)
	}
}

// TestTestTimeVerdict holds the report to the README's bound: a quick
// suite over 3 minutes is "not met", with the ratio.
func TestTestTimeVerdict(t *testing.T) {
	m := machine{Cores: "2"}
	each := []testCost{{Pkg: "a", CPU: time.Second}, {Pkg: "b", CPU: 2 * time.Second}}
	for _, tc := range []struct {
		wall time.Duration
		want string
	}{
		{2 * time.Minute, "| met |"},
		{6 * time.Minute, "**not met** under this load (2.0x the bound)"},
	} {
		got := string(renderTestTime(m, "1.00", testCost{Wall: tc.wall, CPU: 4 * time.Minute}, each, nil))
		if !strings.Contains(got, tc.want) {
			t.Errorf("quick suite of %v: the report lacks %q:\n%s", tc.wall, tc.want, got)
		}
		if !strings.Contains(got, "| b | 0.00 s | 2.00 s |\n| a |") {
			t.Errorf("packages not sorted by CPU time, costliest first:\n%s", got)
		}
	}
}
