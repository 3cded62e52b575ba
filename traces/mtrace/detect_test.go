package mtrace

import "testing"

func TestSniff(t *testing.T) {
	tests := []struct {
		prefix string
		want   bool
	}{
		{"= Start\n", true},
		{"= Start", true},
		{"@ ./prog:[0x11ce] + 0x55b8e54964a0 0x20\n", true},
		{"@ ./prog:(main+0x1e)[0x11ce] + 0x4052a0 0x20\n", true},
		{"+ 0x10 0x8\n", true},
		{"- 0x10\n", true},
		{"< 0x10\n", true},
		{"> 0x20 0x8\n", true},
		{"! 0x10 0x8\n", true},
		{"\n\n  = Start\n", true},
		{"@\tcaller + 0x1 0x1\n", true},
		{"\r\n- 0x10\r\n", true},
		{"\ufeff= Start\n", true}, // the log's reader names the mark
		{"@", true},
		{`{"format":"tlcheck-trace","version":1}` + "\n", false},
		{"\n  {\"format\":\"tlcheck-trace\",\"version\":1,\"events\":[]}", false},
		{"\ufeff{\"format\":\"tlcheck-trace\",\"version\":1}\n", false},
		{"", false},
		{"\n \n", false},
		{"-1\n", false},
		{"+0x10 0x8\n", false},
		{"== Start\n", false},
		{"@@ a + 0x1 0x1\n", false},
		{"hello\n", false},
		{"[1,2]", false},
	}
	for _, tt := range tests {
		if got := Sniff([]byte(tt.prefix)); got != tt.want {
			t.Errorf("Sniff(%q) = %v, want %v", tt.prefix, got, tt.want)
		}
	}
}
