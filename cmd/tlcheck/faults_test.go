package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/hunt"
)

func TestFaultsText(t *testing.T) {
	code, out, errOut := tlcheck(false, "faults")
	if code != exitClean || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	blocks := strings.Split(strings.TrimSuffix(out, "\n"), "\n\n")
	cat := impl.Catalog()
	if len(blocks) != len(cat) {
		t.Fatalf("%d blocks, want one per fault (%d)", len(blocks), len(cat))
	}
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		if lines[0] != string(cat[i].Name) {
			t.Errorf("block %d starts %q, want the name %q", i, lines[0], cat[i].Name)
		}
		for _, label := range []string{"  summary: ", "  bug:     ", "  trigger: ", "  engine:  "} {
			if !strings.Contains(b, "\n"+label) {
				t.Errorf("block %s lacks %q", cat[i].Name, label)
			}
		}
		for _, l := range lines {
			if len(l) > 80 && strings.Contains(strings.TrimSpace(l), " ") {
				t.Errorf("line longer than 80 columns: %q", l)
			}
		}
	}
}

func TestFaultsJSON(t *testing.T) {
	code, out, _ := tlcheck(false, "faults", "--json")
	if code != exitClean {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		Faults []hunt.CatalogFault `json:"faults"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	cat := impl.Catalog()
	if len(got.Faults) != len(cat) {
		t.Fatalf("%d faults, want %d", len(got.Faults), len(cat))
	}
	for i, f := range got.Faults {
		c := cat[i]
		if f != (hunt.CatalogFault{Name: string(c.Name), Summary: c.Summary, Bug: c.Bug, Trigger: c.Trigger, Engine: c.Engine, Also: strings.Join(c.Also, ",")}) {
			t.Errorf("fault %d = %+v, want the catalog's %+v", i, f, c)
		}
	}
}

func TestFaultsUsage(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"extra"}} {
		if code, _, errOut := tlcheck(false, append([]string{"faults"}, args...)...); code != exitInput || !strings.Contains(errOut, "usage: tlcheck faults") {
			t.Errorf("faults %v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
