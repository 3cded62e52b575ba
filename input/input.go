package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/mtrace"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// Format is what an input holds.
type Format string

// The formats. Auto is no format: Open tells the others apart.
const (
	Auto          Format = "auto"
	Trace         Format = "trace"          // the tlcheck trace format, either layout
	Mtrace        Format = "mtrace"         // a glibc mtrace log
	TorchSnapshot Format = "torch-snapshot" // a PyTorch memory snapshot (a pickle)
)

// Formats lists the formats a caller may name, Auto first.
func Formats() []Format { return []Format{Auto, Trace, Mtrace, TorchSnapshot} }

// ParseFormat returns the format named s, or an error listing the names.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%q: want auto, trace, mtrace or torch-snapshot", safetext.Clip(s))
}

// Options say how to open an input. The zero value tells the formats
// apart and reads "-" as an empty standard input.
type Options struct {
	Format Format // "" is Auto
	// Symbols, when not nil, turns an mtrace log's callers into file:line
	// (see mtrace.NewSymbols).
	Symbols *mtrace.Symbols
	// Stdin is what the name "-" reads; nil reads nothing.
	Stdin io.Reader
	// Stacks keeps a snapshot's Python stacks for Input.Stack (see
	// torchsnap.Limits.Stacks).
	Stacks bool
}

// Input is an opened input: a traces.Source of its events.
type Input struct {
	*prefetcher
	name   string // the name messages give it: the file, or <stdin>
	format Format // what it was read as
	prefix []byte // its first bytes, which told the formats apart
	close  func()
	snap   *torchsnap.Reader // a snapshot's reader, for Stack
}

// Annotations returns a snapshot's external_annotations
// (torchsnap.Reader.Annotations); nil for any other input.
func (in *Input) Annotations() []torchsnap.Annotation {
	if in.snap == nil {
		return nil
	}
	return in.snap.Annotations()
}

// OOMs returns a snapshot's oom entries (torchsnap.Reader.OOMs); nil
// for any other input.
func (in *Input) OOMs() []torchsnap.OOM {
	if in.snap == nil {
		return nil
	}
	return in.snap.OOMs()
}

// Stack returns the Python frames of what made event n of a snapshot
// opened with Options.Stacks (torchsnap.Reader.Stack); nil for any other
// input. It may be called once the events up to n have been read.
func (in *Input) Stack(n int) []torchsnap.Frame {
	if in.snap == nil {
		return nil
	}
	return in.snap.Stack(n)
}

// Name is the input's name in messages: the file as given, or <stdin>.
func (in *Input) Name() string { return in.name }

// Format is what the input was read as: Trace, Mtrace or TorchSnapshot.
func (in *Input) Format() Format { return in.format }

// Close stops reading ahead and closes the file.
func (in *Input) Close() { in.close() }

// Open opens name ("-": opts.Stdin) as opts.Format says. Its error names
// the file, with a hint where the file looks like another format.
func Open(name string, opts Options) (*Input, error) {
	var r io.Reader
	in := &Input{name: name, close: func() {}}
	if name == "-" {
		r, in.name = opts.Stdin, "<stdin>"
		if r == nil {
			r = bytes.NewReader(nil)
		}
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err // *PathError: "open NAME: ..."
		}
		r, in.close = f, func() { f.Close() }
	}

	r, prefix, err := sniff(r)
	if err != nil {
		in.close()
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	in.prefix = prefix
	isLog := mtrace.Sniff(prefix)
	proto, isSnap := pickleProtocol(prefix)
	in.format = opts.Format
	if in.format == "" || in.format == Auto {
		switch {
		case isSnap:
			in.format = TorchSnapshot
		case isLog:
			in.format = Mtrace
		default:
			in.format = Trace
		}
	}

	var src traces.Source
	switch in.format {
	case TorchSnapshot:
		sr, err := torchsnap.NewReaderLimits(r, torchsnap.Limits{Stacks: opts.Stacks})
		if err != nil {
			in.close()
			switch {
			case looksLikeTrace(prefix):
				return nil, inFile(err, in.name, "reading a PyTorch memory snapshot: %w (this looks like a tlcheck trace: read it with --from trace, or without --from)")
			case isLog:
				return nil, inFile(err, in.name, "reading a PyTorch memory snapshot: %w (this looks like a glibc mtrace log: read it with --from mtrace, or without --from)")
			}
			return nil, inFile(err, in.name, "reading a PyTorch memory snapshot: %w")
		}
		src, in.snap = sr, sr
	case Mtrace:
		src = mtrace.NewReader(r)
		if opts.Symbols != nil {
			src = opts.Symbols.Source(src)
		}
	default:
		tr, err := traces.NewReader(r)
		if err != nil {
			in.close()
			switch {
			case isLog:
				return nil, inFile(err, in.name, "%w (this looks like a glibc mtrace log: read it with --from mtrace, or without --from)")
			case isSnap:
				return nil, inFile(err, in.name, fmt.Sprintf("%%w (this looks like a pickle, such as a PyTorch memory snapshot, of protocol %s: read it with --from torch-snapshot, or without --from)", proto))
			}
			return nil, inFile(err, in.name, "%w")
		}
		src = tr
	}
	pf, stop := prefetch(src)
	closeFile := in.close
	in.prefetcher, in.close = pf, func() { stop(); closeFile() }
	return in, nil
}

// Explain names the file in an error met while reading the input, with a
// hint where an mtrace log's error comes from a file that looks like a
// trace.
func (in *Input) Explain(err error) error {
	if in.format == Mtrace && looksLikeTrace(in.prefix) {
		return inFile(err, in.name, "%w (this looks like a tlcheck trace: read it with --from trace, or without --from)")
	}
	return inFile(err, in.name, "%w")
}

// sniffSize is how much of an input Open reads to tell the formats apart:
// far more than the first field of the first line needs.
const sniffSize = 512

// sniff reads the first bytes of r and returns a reader of all of r again,
// with those bytes. A file that can seek goes back to where it was, so
// that the trace reader can still seek in it (see traces.NewReader);
// anything else (a pipe) gets the bytes put back in front of it.
func sniff(r io.Reader) (io.Reader, []byte, error) {
	prefix := make([]byte, sniffSize)
	n, err := io.ReadFull(r, prefix)
	prefix = prefix[:n]
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, nil, fmt.Errorf("reading the input: %w", err)
	}
	if s, ok := r.(io.Seeker); ok {
		if _, err := s.Seek(-int64(n), io.SeekCurrent); err == nil {
			return r, prefix, nil
		}
	}
	return io.MultiReader(bytes.NewReader(prefix), r), prefix, nil
}

// pickleProtocol reports whether an input begins as a pickle of a
// snapshot does, and which protocol its first opcodes show:
//
//   - PROTO (0x80) and its protocol, 2 or later; any protocol, so that
//     one this tlcheck does not read is refused as the pickle it is;
//   - protocol 1: EMPTY_DICT ("}"), then BINPUT or LONG_BINPUT ("q",
//     "r"), MARK ("(") or STOP ("."), as Python pickles a dict;
//   - protocol 0: MARK, DICT ("(d"), then PUT ("p") or STOP.
//
// No trace (JSON, which starts with "{" after blanks) and no mtrace log
// (lines of "@ " and "= ") starts with any of these.
func pickleProtocol(prefix []byte) (string, bool) {
	switch {
	case len(prefix) > 1 && prefix[0] == 0x80:
		return fmt.Sprint(prefix[1]), true
	case len(prefix) > 1 && prefix[0] == '}' && bytes.IndexByte([]byte("qr(."), prefix[1]) >= 0:
		return "1", true
	case len(prefix) > 2 && prefix[0] == '(' && prefix[1] == 'd' && (prefix[2] == 'p' || prefix[2] == '.'):
		return "0", true
	}
	return "", false
}

// looksLikeTrace reports whether an input begins as a tlcheck trace does:
// with "{", after blanks.
func looksLikeTrace(prefix []byte) bool {
	b := bytes.TrimLeft(prefix, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// inFile puts the file name into an input error, so that its message
// names the place ("a.jsonl:12: event 10: field "addr": ..."), and wraps
// it as format (one %w) says. The name goes in first: a wrapped error's
// message is made when it is wrapped.
func inFile(err error, name, format string) error {
	var te *traces.Error
	if errors.As(err, &te) {
		te.File = name
		return fmt.Errorf(format, err)
	}
	return fmt.Errorf("%s: "+format, name, err)
}
