package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/input"
)

// leaky leaks one pool block.
const leaky = `{"format":"tlcheck-trace","version":1}
{"op":"dev_malloc","addr":"0x7f2000000000","size":1048576,"site":"pool.c:40"}
{"op":"pool_get","addr":"0x7f2000000000","size":4096,"site":"attn.tl:3"}
{"op":"pool_get","addr":"0x7f2000001000","size":8192,"site":"attn.tl:4"}
{"op":"pool_put","addr":"0x7f2000000000","site":"attn.tl:9"}
{"op":"end"}
`

// dir makes a directory of files and changes into it.
func dir(t *testing.T, files map[string]string) {
	t.Helper()
	d := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(d, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(d)
}

func outcomes(names ...string) []check.Outcome {
	var outs []check.Outcome
	for _, n := range names {
		outs = append(outs, check.File(n, input.Options{}, &check.Policy{}, 0))
	}
	return outs
}

func TestTraces(t *testing.T) {
	if err := Traces([]string{"a.jsonl", "b/a.jsonl", "-"}); err != nil {
		t.Errorf("distinct traces: %v", err)
	}
	if err := Traces([]string{"a.jsonl", "b.jsonl", "./a.jsonl"}); err == nil || err.Error() != "a.jsonl and ./a.jsonl name the same trace" {
		t.Errorf("one trace twice: %v", err)
	}
}

func TestLoadRefuses(t *testing.T) {
	dir(t, map[string]string{"t.jsonl": leaky, "notes.txt": "my notes\n", "sup": "leak:*\n"})
	for _, c := range []struct {
		name string
		o    Options
		want string // in the error; "" for none
	}{
		{"missing", Options{Baseline: "b.json"}, "(run with --update to create it)"},
		{"missing, update", Options{Baseline: "b.json", Update: true}, ""},
		{"a trace", Options{Baseline: "./t.jsonl", Update: true}, "is one of the inputs"},
		{"a suppression file", Options{Baseline: "sup", Update: true, Inputs: []string{"sup"}}, "is one of the inputs"},
		{"not a baseline", Options{Baseline: "notes.txt", Update: true}, "--update: refusing to replace"},
		{"not a baseline, read", Options{Baseline: "notes.txt"}, "notes.txt"},
	} {
		b, err := Load(c.o, []string{"t.jsonl"})
		switch {
		case c.want == "" && (err != nil || b == nil || len(b.Traces) != 0):
			t.Errorf("%s: %v, %v; want an empty baseline", c.name, b, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
	if b, _ := os.ReadFile("notes.txt"); string(b) != "my notes\n" {
		t.Errorf("notes.txt changed: %q", b)
	}
}

// TestUpdateThenGate: an update writes the run's findings; the baseline
// read back holds them, keeps a trace not given unless pruned, and each
// fate is noted.
func TestUpdateThenGate(t *testing.T) {
	dir(t, map[string]string{"t.jsonl": leaky, "u.jsonl": leaky})
	o := Options{Baseline: "b.json", Update: true}
	base, err := Load(o, []string{"t.jsonl", "u.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Update(o, base, outcomes("t.jsonl", "u.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.Messages(o), []string{"wrote b.json: 2 findings in 2 traces"}; !slices.Equal(got, want) {
		t.Errorf("messages %q, want %q", got, want)
	}
	base, err = Load(Options{Baseline: "b.json"}, []string{"t.jsonl"})
	if err != nil || len(base.Traces) != 2 || base.Find("t.jsonl").Accepted() != 1 {
		t.Fatalf("read back: %+v, %v", base, err)
	}
	for _, c := range []struct {
		o    Options
		fate string
	}{{Options{}, "not compared"}, {Options{Update: true}, "kept as it was"}, {Options{Update: true, Prune: true}, "removed (--prune)"}} {
		if got, want := Notes(c.o, base, []string{"./t.jsonl"}), []string{"the baseline's trace u.jsonl was not given: " + c.fate}; !slices.Equal(got, want) {
			t.Errorf("%+v: notes %q, want %q", c.o, got, want)
		}
	}

	kept := Options{Baseline: "b.json", Update: true}
	if w, err = Update(kept, base, outcomes("t.jsonl")); err != nil {
		t.Fatal(err)
	}
	if got, want := w.Messages(kept), []string{"wrote b.json: 2 findings in 2 traces (1 not given, kept as it was)"}; !slices.Equal(got, want) {
		t.Errorf("kept: messages %q, want %q", got, want)
	}
	pruned := Options{Baseline: "b.json", Update: true, Prune: true}
	if w, err = Update(pruned, base, outcomes("t.jsonl")); err != nil {
		t.Fatal(err)
	}
	want := []string{"wrote b.json: 1 finding in 1 trace", "removed u.jsonl from b.json (not given; --prune), with its 1 accepted finding"}
	if got := w.Messages(pruned); !slices.Equal(got, want) {
		t.Errorf("pruned: messages %q, want %q", got, want)
	}
}
