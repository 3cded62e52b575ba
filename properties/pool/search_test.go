package pool

import (
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// search is the harness's Search over Language(faults), the failure as
// this package's.
func search(faults []impl.Fault, seed uint64, more func(int) bool) (Program, *Failure, int) {
	p, f, n := harness.Search(Language(faults), seed, more)
	if f == nil {
		return p, nil, n
	}
	return p, f.Detail.(*Failure), n
}
