package impl

import (
	"errors"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// Error is a misuse the runtime detected and refused. Its Kind is the
// violation kind the contract gives the same call, so a property test can
// hold the runtime's errors against the model's violations one for one.
type Error struct {
	Kind traces.Kind
	Op   traces.Op
	Addr traces.Addr // the object acted on; 0 where the call names none
	Name string      // the parameter's name, for param_register and param_release
	Msg  string
}

// Error reads "double-free: release 0x10000000: object already freed".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Kind))
	b.WriteString(": ")
	b.WriteString(e.Op.String())
	if e.Name != "" {
		b.WriteString(" ")
		b.WriteString(e.Name)
	}
	if e.Addr != 0 {
		b.WriteString(" ")
		b.WriteString(e.Addr.String())
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// ErrOutOfMemory is returned, wrapped, by Alloc and StructInit when the
// simulated heap cannot hand out a block of the size asked for: larger than
// MaxSize, or a size class whose address range is used up. It is not a
// violation of the contract: nothing was allocated and nothing is recorded.
var ErrOutOfMemory = errors.New("simulated heap out of memory")

// errs collects the errors one call finds. A call usually finds none or
// one; a scope exit or a struct's death can find several, one per dead
// field or record it trips over.
type errs struct {
	list []error
}

func (c *errs) add(kind traces.Kind, op traces.Op, a traces.Addr, name, msg string) {
	c.list = append(c.list, &Error{Kind: kind, Op: op, Addr: a, Name: name, Msg: msg})
}

// take returns what was collected since the last take: nil, the single
// *Error, or an errors.Join of them in the order found (errors.As finds
// the first).
func (c *errs) take() error {
	switch len(c.list) {
	case 0:
		return nil
	case 1:
		err := c.list[0]
		c.list = c.list[:0]
		return err
	}
	err := errors.Join(c.list...)
	c.list = c.list[:0]
	return err
}
