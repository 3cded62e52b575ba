package input

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Reread is a file that more than one analysis reads, each from its
// start (an HTML export replays a snapshot, and explain reads it again):
// a named file is opened again for each, and standard input ("-"), which
// can be read only once, is read whole at NewReread and served from
// memory.
type Reread struct {
	file string
	data []byte // standard input's bytes
}

// NewReread prepares file, reading stdin whole where file is "-". Its
// error names <stdin>.
func NewReread(file string, stdin io.Reader) (*Reread, error) {
	r := &Reread{file: file}
	if file == "-" && stdin != nil {
		var err error
		if r.data, err = io.ReadAll(stdin); err != nil {
			return nil, fmt.Errorf("<stdin>: %w", err)
		}
	}
	return r, nil
}

// Options returns o with its Stdin a reader of the held bytes from
// their start, for Open.
func (r *Reread) Options(o Options) Options {
	o.Stdin = bytes.NewReader(r.data)
	return o
}

// Raw opens the file's bytes as they are, for a reader of its own.
func (r *Reread) Raw() (io.ReadCloser, error) {
	if r.file == "-" {
		return io.NopCloser(bytes.NewReader(r.data)), nil
	}
	return os.Open(r.file)
}

// Name is the file's name in messages: <stdin> for "-".
func (r *Reread) Name() string {
	if r.file == "-" {
		return "<stdin>"
	}
	return r.file
}
