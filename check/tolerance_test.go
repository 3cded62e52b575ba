package check

import (
	"math"
	"strings"
	"testing"
)

func TestTolerance(t *testing.T) {
	tests := []struct {
		spec    string
		was     uint64
		allowed uint64
		err     string // a part of the error; "" for none
	}{
		{"0", 100, 100, ""},
		{"10%", 100, 110, ""},
		{"10%", 99, 108, ""}, // 9.9 rounds down
		{"10%", 0, 0, ""},    // a percentage of nothing is nothing
		{"2.5%", 1000, 1025, ""},
		{"0%", 1000, 1000, ""},
		{"4096", 0, 4096, ""},
		{"4KiB", 10, 4106, ""},
		{"2MiB", 0, 2 << 20, ""},
		{"1GiB", 0, 1 << 30, ""},
		{"16B", 0, 16, ""},
		{"10%,4KiB", 100, 100 + 4096, ""},            // bytes allow more
		{"4KiB, 10%", 1 << 20, 1<<20 + 1<<20/10, ""}, // the percentage allows more
		{"100%", math.MaxUint64, math.MaxUint64, ""}, // saturates
		{"18446744073709551615", 1, math.MaxUint64, ""},
		{"-1%", 0, 0, "percentage"},
		{"NaN%", 0, 0, "percentage"},
		{"Inf%", 0, 0, "percentage"},
		{"x%", 0, 0, "percentage"},
		{"10%,20%", 0, 0, "percentage"},
		{"1,2", 0, 0, "want a percentage"},
		{"1,2,3", 0, 0, "or both"},
		{"-5", 0, 0, "want a percentage"},
		{"5KB", 0, 0, "want a percentage"},
		{"", 0, 0, "want a percentage"},
		{"99999999999999999999", 0, 0, "want a percentage"},
		{"17179869184GiB", 0, 0, "want a percentage"}, // overflows
	}
	for _, tt := range tests {
		var tol Tolerance
		err := tol.Set(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Set(%q): error %v, want one containing %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Set(%q): %v", tt.spec, err)
			continue
		}
		if got := tol.Allowed(tt.was); got != tt.allowed {
			t.Errorf("%q of %d allows %d, want %d", tt.spec, tt.was, got, tt.allowed)
		}
	}
	var zero Tolerance
	if zero.Allowed(123) != 123 || zero.String() != "0" {
		t.Errorf("the default tolerance allows %d (%q), want none", zero.Allowed(123), zero.String())
	}
}

func TestGrowth(t *testing.T) {
	tests := []struct {
		g    Growth
		want string
		over bool
	}{
		{Growth{"leaked bytes", 100, 100, 100}, "leaked bytes 100 (baseline 100)", false},
		{Growth{"leaked bytes", 100, 90, 100}, "leaked bytes 90 (baseline 100)", false},
		{Growth{"leaked bytes", 100, 101, 100}, "leaked bytes 101 (baseline 100): grew beyond the tolerance", true},
		{Growth{"peak live bytes", 100, 110, 110}, "peak live bytes 110 (baseline 100, allowed up to 110)", false},
		{Growth{"peak live bytes", 100, 111, 110}, "peak live bytes 111 (baseline 100, allowed up to 110): grew beyond the tolerance", true},
	}
	for _, tt := range tests {
		if got := tt.g.String(); got != tt.want || tt.g.Exceeded() != tt.over {
			t.Errorf("%+v: %q (exceeded %v), want %q (%v)", tt.g, got, tt.g.Exceeded(), tt.want, tt.over)
		}
	}
}
