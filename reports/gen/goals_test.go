package main

import "testing"

func TestLoaded(t *testing.T) {
	for _, c := range []struct {
		load, cores string
		want        bool
	}{
		{"1.45, 1.34, 2.84", "2", false},
		{"2.00, 9.00, 9.00", "2", false},
		{"11.83, 13.85, 11.06", "2", true},
		{"unknown", "2", false},
		{"", "2", false},
	} {
		if got := loaded(c.load, c.cores); got != c.want {
			t.Errorf("loaded(%q, %q) = %t, want %t", c.load, c.cores, got, c.want)
		}
	}
}
