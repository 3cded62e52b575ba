package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/input"
)

func TestFindSuspects(t *testing.T) {
	stdin := func(s string) input.Options { return input.Options{Stdin: strings.NewReader(s)} }
	res, err := FindSuspects("-", stdin(loopTrace(false)), suspect.Options{})
	if err != nil || len(res.Suspects) != 1 || res.Suspects[0].Site != "keep.py:2" {
		t.Errorf("a loop that keeps a block: %+v, %v; want keep.py:2", res, err)
	}
	if _, err := FindSuspects("-", stdin(loopTrace(false)), suspect.Options{Iteration: "nowhere.py:9"}); !errors.Is(err, suspect.ErrNoSuchSite) {
		t.Errorf("a marker at no site: %v, want ErrNoSuchSite", err)
	}
	if _, err := FindSuspects("-", stdin("{\"format\":\"tlcheck-trace\",\"version\":1}\n{\"op\":\"bogus\"}\n"), suspect.Options{}); err == nil || !strings.Contains(err.Error(), "<stdin>") {
		t.Errorf("a bad trace: %v, want an error naming <stdin>", err)
	}
	if _, err := FindSuspects("no-such-file.jsonl", input.Options{}, suspect.Options{}); err == nil || !strings.Contains(err.Error(), "no-such-file.jsonl") {
		t.Errorf("a missing file: %v, want an error naming it", err)
	}
}
