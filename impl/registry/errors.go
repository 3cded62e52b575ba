package registry

import (
	"errors"
	"fmt"
)

// The kinds of misuse. A call returns them wrapped in an *Error that names
// the call and the pointer; test with errors.Is.
var (
	ErrNull          = errors.New("NULL is never registered")
	ErrRegistered    = errors.New("already registered")
	ErrHeld          = errors.New("the address of a live buffer, still held by its aliases")
	ErrNotRegistered = errors.New("not registered")
	ErrNotBuffer     = errors.New("not the real pointer of a buffer")
)

// Error is a call's misuse: which call, on which pointer, and why.
type Error struct {
	Op  string // "register", "register_buffer", "alias", "unregister"
	Ptr Ptr    // the pointer at fault
	Err error  // one of the Err* sentinels
}

func (e *Error) Error() string {
	return fmt.Sprintf("registry: %s %s: %v", e.Op, e.Ptr, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
