package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/snapgen"
)

func TestExplainCommand(t *testing.T) {
	dir := t.TempDir()
	oom := writeSnapshot(t, dir, "oom.pickle", snapgen.Config{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 300 << 20})
	normal := writeSnapshot(t, dir, "train.pickle", snapgen.Config{Steps: 4})
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{oom}, exitClean, []string{"OUT OF MEMORY", "    forward  model.py:16\n", "reserved but free", "largest free block", "default (recorded)", "does not fit", "VALIDATED"}},
		{[]string{"--setting", "max_split_size_mb:64", oom}, exitClean, []string{"max_split_size_mb:64"}},
		{[]string{normal}, exitClean, []string{"NO OUT-OF-MEMORY ERROR", "without limit", "VALIDATED"}},
		{[]string{"--capacity", "1073741824", normal}, exitClean, []string{"on a device of 1.00 GiB"}},
		{[]string{"--recorded", "max_split_size_mb:5", oom}, exitInput, nil},
		{[]string{oom, normal}, exitInput, nil},
		{[]string{}, exitInput, nil},
	} {
		var stdout, stderr bytes.Buffer
		code := run(&env{stdout: &stdout, stderr: &stderr}, append([]string{"explain"}, c.args...))
		if code != c.code {
			t.Errorf("%v: exit %d, stderr %q; want %d", c.args, code, stderr.String(), c.code)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%v: no %q in\n%s", c.args, w, stdout.String())
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(&env{stdout: &stdout, stderr: &stderr}, []string{"explain", "--json", oom}); code != exitClean {
		t.Fatalf("--json: exit %d: %s", code, stderr.String())
	}
	var got struct {
		OOM *struct {
			Request uint64 `json:"request"`
		} `json:"oom"`
		Validation struct{ Agrees bool }     `json:"validation"`
		WhatIf     []struct{ Modelled bool } `json:"what_if"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || got.OOM == nil || got.OOM.Request == 0 || !got.Validation.Agrees || len(got.WhatIf) == 0 {
		t.Errorf("--json: %v %+v", err, got)
	}
}
