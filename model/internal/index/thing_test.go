package index

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
