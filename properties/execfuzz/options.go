// Package execfuzz is `tlcheck fuzz --exec`'s pipeline, importable: it
// drives a runtime in another process, in any language, over the protocol
// of drive/PROTOCOL.md, with programs of the calls the driver's hello
// offers; checks every answer against the reference model as it comes;
// shrinks a failure on the driver; writes the counterexample (the calls,
// which --replay runs again, beside the trace the runtime wrote) and
// prints the report with its reproduce line. With a second driver
// (Options.Against) it is the differential check of the two (drive.Diff);
// with a tfjs driver it searches tfjs programs. Run also replays a saved
// calls file (Options.Replay) and checks that the driver answers it the
// same way twice.
//
// It is to the fuzz command what package check is to replay: the command
// parses its flags into Options and calls Run. Like package harness, whose
// Save, Reproduce and Progress it uses, it links no runtime of its own.
package execfuzz

import (
	"io"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// Options are the settings of one `tlcheck fuzz --exec` run, its flags.
type Options struct {
	Command      []string // the driver's command line, split into words (see SplitWords)
	Line         string   // the command line as the user wrote it, for reports and reproduce lines
	Time         time.Duration
	Seed         uint64
	Out          string // the directory the counterexample goes to
	CallTimeout  time.Duration
	StartTimeout time.Duration
	Restart      bool         // after a driver's crash, hang or protocol error, start it again and search on
	Replay       string       // a calls file to run once instead of searching; "" for none
	Against      string       // a second driver's command line for the differential; "" for none
	Misuse       drive.Misuse // programs that misuse the runtime too
	Steps        int          // programs of at least this many steps; 0 for the generator's own

	// Stdout takes the report, Stderr what went wrong around it;
	// Progress, where set, shows the search's progress (a terminal).
	Stdout, Stderr, Progress io.Writer
}

// config is the drive.Config of a driver started with command under the
// options' timeouts, which its messages name by their flags.
func (opts Options) config(command []string) drive.Config {
	return drive.Config{Command: command, CallTimeout: opts.CallTimeout, StartTimeout: opts.StartTimeout,
		CallTimeoutFlag: "--call-timeout", StartTimeoutFlag: "--start-timeout"}
}

// The outcomes, by the exit codes they become.
const (
	exitClean     = harness.Clean
	exitViolation = harness.Found
	exitInput     = harness.Trouble
)
