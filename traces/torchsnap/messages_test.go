package torchsnap_test

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/readertest"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// TestMessagesNameThePlace: errors a user can meet on a pickle Python
// loads name the bytes concerned, in the file's terms: the memo bound
// gives how many values it met in how many bytes read (not the offset as
// if it were the file's size), and a dict before the snapshot's says
// which dict was read as the snapshot and where each was made.
func TestMessagesNameThePlace(t *testing.T) {
	snap := "\x80\x04" + pdict(pstr("segments"), "]", pstr("device_traces"), "]")
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"the memo bound", "\x80\x04N" + strings.Repeat("\x94", 2<<20) + ".",
			"74899 values memoized in the pickle's first 74902 bytes"},
		// Python's pickle.loads returns the second dict: the first,
		// popped, is no snapshot's.
		{"a dict before the snapshot's", "\x80\x04}0" + snap[2:] + ".",
			"got the dict made at byte 4, after the dict made at byte 2, which tlcheck reads as the snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := torchsnap.NewReader(readertest.Concat(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v\nwant an error containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "other than the first dict") {
				t.Errorf("%v names no place", err)
			}
		})
	}
}
