package check

import (
	"errors"

	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/input"
)

// FindSuspects opens the file name as in says (with its stacks) and
// searches it for leak suspects (suspect.Find, given the input's
// annotations and stacks as SuspectOptions adds them), as tlcheck
// suspects does. An error of the input names its file, line or event; a
// marker that names no site or annotation of the trace
// (suspect.ErrNoSuchSite, suspect.ErrNoSuchAnnotation) is returned as
// the search says it.
func FindSuspects(name string, in input.Options, opts suspect.Options) (*suspect.Result, error) {
	in.Stacks = true
	src, err := input.Open(name, in)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	res, err := suspect.Find(src, SuspectOptions(src, opts))
	if err != nil && !errors.Is(err, suspect.ErrNoSuchSite) && !errors.Is(err, suspect.ErrNoSuchAnnotation) {
		err = src.Explain(err)
	}
	return res, err
}
