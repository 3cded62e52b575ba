package traces

// FormatName is the value of the header's format field.
const FormatName = "tlcheck-trace"

// Version is the format version this package reads and writes.
const Version = 1

// Header is a trace's first value: the document's fields other than events,
// or line 1 of a stream.
type Header struct {
	Format  string // must be FormatName
	Version int    // must be Version
	Effects bool   // the runtime also writes a free for every real free
	Source  string // free text: which runtime wrote the trace
}

// Source is a stream of events with their positions: a trace Reader, or a
// reader of another input format (such as a glibc mtrace log) that maps onto
// the same events.
type Source interface {
	// Header returns the trace's header.
	Header() Header
	// Next fills ev with the next event and returns nil, io.EOF at the end,
	// or an *Error naming the place that could not be read. Slices in ev may
	// be reused by the following call.
	Next(ev *Event) error
	// Pos returns the position of the event last returned by Next.
	Pos() Pos
}

// A Lender is a Source that can lend its next event in place instead of
// copying it into the caller's: a reader that reads ahead on another
// goroutine holds batches of events, and copying each one out costs about
// as much as checking it. Consumers such as model.Replay use Lend when a
// Source has it, as io.Copy uses WriterTo.
type Lender interface {
	Source
	// Lend returns the next event, valid (and not to be modified) until
	// the following call, and its position (which Pos then returns too),
	// or the error Next would return.
	Lend() (*Event, Pos, error)
}
