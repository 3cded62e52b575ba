package model_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesNameTheCause holds the messages of the corpus traces whose
// kind alone does not say what the user needs: the cause the model knows
// must be in the message.
func TestMessagesNameTheCause(t *testing.T) {
	cases := []struct {
		trace string
		event int
		want  string
	}{
		// A stale record's release only lowered the count; the free
		// came two calls later.
		{"stale-reuse-later-free", 9, "the scope exit at event 7 a.tl:7 skipped a stale record (made at event 1 a.tl:2) of object #1"},
		// Without effects, the count a release states shows the same.
		{"count-mismatch-stale-record", 7, "the scope exit at event 6 a.tl:7 skipped a stale record"},
		// A teardown's free after end.
		{"premature-free-after-end", 5, "after the end of the run at event 4"},
	}
	for _, tc := range cases {
		t.Run(tc.trace, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join(corpusDir, tc.trace+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := replayText(t, string(text))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range rep.Violations {
				if v.Event == tc.event {
					if !strings.Contains(v.Message, tc.want) {
						t.Errorf("event %d: %s: %q lacks %q", v.Event, v.Kind, v.Message, tc.want)
					}
					return
				}
			}
			t.Errorf("no violation at event %d: %v", tc.event, verdict(rep))
		})
	}
}
