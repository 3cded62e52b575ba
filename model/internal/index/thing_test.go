package index

import (
	"fmt"
	"strings"
	"testing"
)

// testThing stands for the rules' thing: a Head and data of its own,
// which some kinds keep between lives.
type testThing struct {
	Head
	data *int
}

func (t *testThing) Indexed() *Head { return &t.Head }

func (t *testThing) Renew(k Kind) { *t = testThing{data: t.data} }

func (t *testThing) KeepsData() bool { return t.data != nil }

// testConfig leans kind 0 (a heap block, say) and pins kind 1 (an object).
func testConfig() Config[testThing] {
	return Config[testThing]{Spaces: 2, Lean: 1 << 0, Pinned: 1 << 1,
		NewPinned: func() *testThing { return &testThing{data: new(int)} }}
}

func newTestStore() *store[testThing, *testThing] {
	cfg := testConfig()
	return &store[testThing, *testThing]{lean: cfg.Lean, pin: cfg.Pinned, newPinned: cfg.NewPinned}
}

// headSecond is a thing type that does not begin with its Head.
type headSecond struct {
	n int
	Head
}

func (t *headSecond) Indexed() *Head  { return &t.Head }
func (t *headSecond) Renew(Kind)      { *t = headSecond{} }
func (t *headSecond) KeepsData() bool { return false }

// TestConfigChecked holds NewTuned to refusing, by name, what it cannot
// keep: a thing type whose Head is not first (headOf would misread it), a
// lean kind past the entries' kind bits, pinned kinds with no maker.
func TestConfigChecked(t *testing.T) {
	panics := func(name, want string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), want) {
				t.Errorf("%s: got panic %v, want one saying %q", name, r, want)
			}
		}()
		f()
	}
	panics("head second", "first field", func() { NewTuned[headSecond](Config[headSecond]{Spaces: 1}) })
	panics("lean kind 7", "can be lean", func() { NewTuned[testThing](Config[testThing]{Spaces: 1, Lean: 1 << 7}) })
	panics("pinned, no maker", "NewPinned", func() { NewNaive[testThing](Config[testThing]{Spaces: 1, Pinned: 1 << 1}) })
	NewTuned[testThing](testConfig()) // and accepts a sound one
}
