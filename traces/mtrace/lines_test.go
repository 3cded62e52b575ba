package mtrace

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// lines reads every line of b, and the error that ended them.
func lines(b *lineBuf) ([]string, error) {
	var got []string
	for {
		line, err := b.next()
		if err != nil {
			return got, err
		}
		got = append(got, string(line))
	}
}

// TestLineBufSplits holds the splitter to strings.Split, whatever sizes
// the underlying reader hands its bytes over in.
func TestLineBufSplits(t *testing.T) {
	long := strings.Repeat("y", 5*bufSize/2)
	logs := []struct {
		name string
		log  string
		want []string
	}{
		{"empty", "", nil},
		{"one line", "a\n", []string{"a"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"blank lines", "\n\na\n\n", []string{"", "", "a", ""}},
		{"carriage returns are kept", "a\r\nb\r", []string{"a\r", "b\r"}},
		{"a line longer than the buffer", "a\n" + long + "\nb\n", []string{"a", long, "b"}},
		{"a final line longer than the buffer", "a\n" + long, []string{"a", long}},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"half at a time", iotest.HalfReader},
		{"EOF with the data", iotest.DataErrReader},
	}
	for _, tt := range logs {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				b := lineBuf{rd: rd.wrap(strings.NewReader(tt.log))}
				got, err := lines(&b)
				if err != io.EOF {
					t.Fatalf("ended with %v, want io.EOF", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("lines (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestLineBufReset checks that a reset splitter reads its new reader from
// the start, as TestReaderAllocs relies on.
func TestLineBufReset(t *testing.T) {
	b := lineBuf{rd: strings.NewReader("a\nunfinished")}
	if line, err := b.next(); string(line) != "a" || err != nil {
		t.Fatalf("first line %q, %v", line, err)
	}
	b.Reset(strings.NewReader("b\n"))
	got, err := lines(&b)
	if err != io.EOF || !cmp.Equal(got, []string{"b"}) {
		t.Errorf("after Reset: %q, %v; want [b], EOF", got, err)
	}
}

// broken is an underlying reader that misbehaves after its data.
type broken struct {
	data string
	n    int   // what Read returns once the data is out
	err  error // and with it
}

func (r *broken) Read(p []byte) (int, error) {
	if r.data != "" {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	return r.n, r.err
}

// TestLineBufReadErrors checks that the whole lines before a failure are
// read, the unfinished one is dropped, and the failure is returned, for
// good.
func TestLineBufReadErrors(t *testing.T) {
	fire := errors.New("disk on fire")
	tests := []struct {
		name string
		rd   io.Reader
		want error
	}{
		{"an error", &broken{data: "a\nb\nunfinished", err: fire}, fire},
		{"no progress", &broken{data: "a\nb\nunfinished"}, io.ErrNoProgress},
		{"a count past the buffer", &broken{data: "a\nb\nunfinished", n: 1 << 30}, errBadCount},
		{"a negative count", &broken{data: "a\nb\nunfinished", n: -1}, errBadCount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := lineBuf{rd: tt.rd}
			got, err := lines(&b)
			if err != tt.want {
				t.Fatalf("ended with %v, want %v", err, tt.want)
			}
			if !cmp.Equal(got, []string{"a", "b"}) {
				t.Errorf("lines %q, want [a b]", got)
			}
			if _, again := b.next(); again != tt.want {
				t.Errorf("next call: %v, want %v again", again, tt.want)
			}
		})
	}
}
