package drive

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Every bound of the harness at, just below and just above its value:
// here the line reader's (MaxLine), an answer's events (maxAnswerEvents)
// and the stderr kept (StderrKeep); bounds_test.go has a program's events
// and the timeouts, through drivers.

// TestLineBound: a line of MaxLine bytes (its newline not counted) is
// read, one byte more is not the protocol, however the bytes arrive: in
// one write, a byte at a time at the end, or in pieces of a pipe's size.
func TestLineBound(t *testing.T) {
	for _, max := range []int{100, 64 << 10, 1 << 20} {
		for _, n := range []int{max - 1, max, max + 1} {
			for _, how := range []string{"one write", "the newline alone", "4 KiB pieces"} {
				t.Run(fmt.Sprintf("max %d, line %d, %s", max, n, how), func(t *testing.T) {
					line := bytes.Repeat([]byte("x"), n)
					got, err := readOneLine(t, max, line, how)
					switch {
					case n <= max && (err != nil || !bytes.Equal(got, line)):
						t.Fatalf("a line of %d bytes, the bound %d: %d bytes, %v; want it read", n, max, len(got), err)
					case n > max && !errors.Is(err, errLineTooLong):
						t.Fatalf("a line of %d bytes, the bound %d: %d bytes, %v; want it too long", n, max, len(got), err)
					}
				})
			}
		}
	}
}

// readOneLine writes line and a newline to a pipe, as how says, and reads
// a line from it with a lineReader of bound max.
func readOneLine(t *testing.T, max int, line []byte, how string) ([]byte, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		defer w.Close()
		all := append(bytes.Clone(line), '\n')
		switch how {
		case "one write":
			w.Write(all)
		case "the newline alone":
			w.Write(line)
			time.Sleep(10 * time.Millisecond)
			w.Write([]byte("\n"))
		default:
			for len(all) > 0 {
				k := min(len(all), 4<<10)
				w.Write(all[:k])
				all = all[k:]
			}
		}
	}()
	lr := lineReader{f: r, max: max, buf: make([]byte, 64<<10)}
	got, err := lr.line(10 * time.Second)
	return bytes.Clone(got), err
}

// TestAnswerEventsBound: an answer of maxAnswerEvents events is read, one
// more is not the protocol.
func TestAnswerEventsBound(t *testing.T) {
	for _, n := range []int{maxAnswerEvents - 1, maxAnswerEvents, maxAnswerEvents + 1} {
		var b strings.Builder
		b.WriteString(`{"id":1,"outcome":"done","events":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"op":"free","addr":"0x10"}`)
		}
		b.WriteString(`]}`)
		a, err := ParseAnswer([]byte(b.String()))
		switch {
		case n <= maxAnswerEvents && (err != nil || len(a.Events) != n):
			t.Errorf("an answer of %d events: %d read, %v", n, len(a.Events), err)
		case n > maxAnswerEvents && (err == nil || !strings.Contains(err.Error(), "more than 16384 events")):
			t.Errorf("an answer of %d events: %v, want more than 16384 events", n, err)
		}
	}
}

// TestStderrBound: the stderr kept is the last StderrKeep bytes, all of
// them, and a note of what was dropped only when something was.
func TestStderrBound(t *testing.T) {
	const keep = 64 << 10
	for _, n := range []int{keep - 1, keep, keep + 1} {
		r := newRing(keep)
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		// In two writes, the second across the ring's end.
		r.Write(b[:n/3])
		r.Write(b[n/3:])
		got := r.String()
		tail := string(b[max(n-keep, 0):])
		switch {
		case n <= keep && got != tail:
			t.Errorf("%d bytes written to a ring of %d: %d kept (%.20q...), want them all", n, keep, len(got), got)
		case n > keep && got != fmt.Sprintf("[%d earlier bytes dropped]\n", n-keep)+tail:
			t.Errorf("%d bytes written to a ring of %d: %.40q..., want a note of 1 dropped, then the last %d", n, keep, got, keep)
		}
		if r.Kept() != min(n, keep) {
			t.Errorf("%d bytes written to a ring of %d: Kept %d", n, keep, r.Kept())
		}
	}
	if got := (Config{}).withDefaults().StderrKeep; got != keep {
		t.Errorf("the default stderr kept is %d, want 64 KiB", got)
	}
	if got := (Config{}).withDefaults().MaxLine; got != 1<<20 {
		t.Errorf("the default line bound is %d, want 1 MiB", got)
	}
}
