package input

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/model"
)

// sniffCase is an input and the format Auto must read it as.
type sniffCase struct {
	name   string
	data   string
	format Format
	events int // the events it holds, where Open reads them (-1: not checked)
}

// snapshotBody is a PyTorch memory snapshot with no segments and no
// entries, after its PROTO: {"segments": [], "device_traces": []}.
const snapshotBody = "}(\x8c\x08segments]\x8c\x0ddevice_traces]u."

// sniffCases generates the starts of every format: a snapshot after PROTO
// of each protocol (0 to 5: Python writes PROTO from protocol 2 on, and
// reads it in any), a trace in either layout after each kind of blank
// line, and an mtrace log starting with each kind of line, after blanks.
func sniffCases() []sniffCase {
	var cs []sniffCase
	for p := range 6 {
		cs = append(cs, sniffCase{fmt.Sprintf("snapshot, protocol %d", p), "\x80" + string(rune(p)) + snapshotBody, TorchSnapshot, 0})
	}
	const (
		header = `{"format":"tlcheck-trace","version":1}`
		ev1    = `{"op":"malloc","addr":"0x10","size":8}`
		ev2    = `{"op":"free","addr":"0x10"}`
		ev3    = `{"op":"end"}`
	)
	stream := header + "\n" + ev1 + "\n" + ev2 + "\n" + ev3 + "\n"
	document := `{"format":"tlcheck-trace","version":1,"events":[` + "\n" + ev1 + ",\n" + ev2 + ",\n" + ev3 + "\n]}\n"
	for _, lead := range []string{"", "\n", "\r\n", " \t\n", "\n\n\n"} {
		cs = append(cs,
			sniffCase{fmt.Sprintf("stream after %q", lead), lead + stream, Trace, 3},
			sniffCase{fmt.Sprintf("document after %q", lead), lead + document, Trace, 3})
	}
	for _, line := range []string{
		"= Start", "@ ./prog:[0x11ce] + 0x10 0x8", "+ 0x10 0x8", "- 0x10", "< 0x10", "> 0x20 0x8", "!",
	} {
		for _, lead := range []string{"", "\n", " \n", "\t"} {
			cs = append(cs, sniffCase{fmt.Sprintf("mtrace %q after %q", line, lead), lead + line + "\n= End\n", Mtrace, -1})
		}
	}
	return cs
}

// TestSniffFormats opens each generated start with Auto, from a file
// (which sniff seeks back in) and from standard input (a stream it puts
// the bytes back in front of), and checks the format chosen and, where
// Open reads the input, the events read.
func TestSniffFormats(t *testing.T) {
	dir := t.TempDir()
	for i, c := range sniffCases() {
		file := filepath.Join(dir, fmt.Sprintf("in%d", i))
		if err := os.WriteFile(file, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{file, "-"} {
			in, err := Open(name, Options{Stdin: bytes.NewBufferString(c.data)})
			if err != nil {
				t.Errorf("%s (%s): %v", c.name, name, err)
				continue
			}
			if in.Format() != c.format {
				t.Errorf("%s (%s): read as %s, want %s", c.name, name, in.Format(), c.format)
			}
			if c.events >= 0 {
				rep, err := model.Replay(in)
				if err != nil || rep.Events != c.events {
					t.Errorf("%s (%s): %d events, error %v; want %d events", c.name, name, rep.Events, err, c.events)
				}
			}
			in.Close()
		}
	}
}

// isPickle reports whether pickleProtocol takes prefix for a pickle's start.
func isPickle(prefix []byte) bool {
	_, ok := pickleProtocol(prefix)
	return ok
}

// TestSniffPickleProtocols holds isPickle to every PROTO byte pickle
// protocols have (0 to 5), and to no start of a trace or an mtrace log:
// every byte those may start with is valid UTF-8 text, never 0x80.
func TestSniffPickleProtocols(t *testing.T) {
	for p := range 6 {
		if prefix := []byte{0x80, byte(p), '}'}; !isPickle(prefix) {
			t.Errorf("isPickle(%q) = false: PROTO %d is a pickle's start", prefix, p)
		}
	}
	for _, c := range sniffCases() {
		if c.format != TorchSnapshot && isPickle([]byte(c.data)) {
			t.Errorf("isPickle(%q) = true for a %s", safetext.Clip(c.data), c.format)
		}
	}
	for _, s := range []string{"", "{", strings.Repeat(" ", sniffSize)} {
		if isPickle([]byte(s)) {
			t.Errorf("isPickle(%q) = true", s)
		}
	}
}
