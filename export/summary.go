package export

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// Kinds lists the export's violations by kind, in the order of
// traces.Kinds, comma-separated: "1 double-free, 2 leak"; "" for none.
func (s Summary) Kinds() string {
	var kinds []string
	for _, k := range traces.Kinds() {
		if n := s.ByKind[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(kinds, ", ")
}
