package mtrace

import (
	"strconv"
	"testing"
)

// TestHexDigits holds the eight-at-a-time path to strconv on every digit
// and every byte that is not one, at every position.
func TestHexDigits(t *testing.T) {
	check := func(s string) {
		t.Helper()
		got, ok := hexDigits([]byte(s))
		want, err := strconv.ParseUint(s, 16, 64)
		// strconv accepts underscores only with base 0; a sign never.
		if ok != (err == nil) || ok && got != want {
			t.Fatalf("hexDigits(%q) = %#x, %v; strconv: %#x, %v", s, got, ok, want, err)
		}
	}
	for _, s := range []string{"0", "f", "F", "10", "deadbeef", "DEADBEEF", "55b8e54964a0", "ffffffffffffffff",
		"10000000000000000", "00000000000000000001", "0000000000000000000", "123456789abcdef0", "fedcba9876543210"} {
		check(s)
	}
	for c := range 256 {
		for pos := range 16 {
			b := []byte("0123456789abcdef")
			b[pos] = byte(c)
			check(string(b))
			check(string(b[:pos+1]))
		}
	}
}

func FuzzHexDigits(f *testing.F) {
	f.Add("55b8e54964a0")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := hexDigits([]byte(s))
		want, err := strconv.ParseUint(s, 16, 64)
		if ok != (err == nil) || ok && got != want {
			t.Fatalf("hexDigits(%q) = %#x, %v; strconv: %#x, %v", s, got, ok, want, err)
		}
	})
}

func TestHexBack(t *testing.T) {
	tests := []struct {
		s        string
		v        uint64
		start    int
		prefixed bool
		ok       bool
	}{
		{"+ 0x55b8e54964a0", 0x55b8e54964a0, 2, true, true},
		{"0x55b8e54964a0 0x20", 0x20, 15, true, true},
		{"@ x + 0x10 0", 0, 11, false, true},
		{"abc", 0xabc, 0, false, true},
		{"ffffffffffffffff", 0xffffffffffffffff, 0, false, true},
		{" 1ffffffffffffffff", 0, 0, false, false}, // 17 digits
		{"0x", 0, 0, false, false},
		{"- 0x10 ", 0, 0, false, false},
		{"\xff\xe1\x80\xb0\x80012345678", 0x12345678, 5, false, true}, // high bytes next to the digits
		{"é0xAbCdEf0123", 0xabcdef0123, 2, true, true},
		{"", 0, 0, false, false},
	}
	for _, tt := range tests {
		v, start, prefixed, ok := hexBack([]byte(tt.s), len(tt.s))
		if v != tt.v || start != tt.start || prefixed != tt.prefixed || ok != tt.ok {
			t.Errorf("hexBack(%q) = %#x, %d, %v, %v; want %#x, %d, %v, %v",
				tt.s, v, start, prefixed, ok, tt.v, tt.start, tt.prefixed, tt.ok)
		}
	}
}
