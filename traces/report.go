package traces

// Kind is a violation kind. The strings are fixed by the contract.
type Kind string

// The violation kinds of the contract.
const (
	DoubleFree     Kind = "double-free"
	UseAfterFree   Kind = "use-after-free"
	InvalidAddress Kind = "invalid-address"
	PrematureFree  Kind = "premature-free"
	StaleReuse     Kind = "stale-reuse"
	Leak           Kind = "leak"
	Overlap        Kind = "overlap"
	Misuse         Kind = "misuse"
	// SavedModified: a saved tensor unpacked at another version of its
	// storage than it was saved at (layer 5).
	SavedModified Kind = "saved-modified"
	// CountMismatch: a layer-2 op states a reference count (its count
	// field) other than the model's for the object after the op.
	CountMismatch Kind = "count-mismatch"
)

// Kinds lists every violation kind in the contract's order.
func Kinds() []Kind {
	return []Kind{DoubleFree, UseAfterFree, InvalidAddress, PrematureFree, StaleReuse, Leak, Overlap, Misuse, SavedModified, CountMismatch}
}

// Related is an earlier event that explains a violation: where the object
// was made, where it died, which stale record acted.
type Related struct {
	Event int    `json:"event"`
	Line  int    `json:"line,omitempty"`
	What  string `json:"what"` // "allocated", "freed", "stale record", ...
	Site  string `json:"site,omitempty"`
}

// Violation is one thing the runtime did wrong, found at one event.
type Violation struct {
	Kind    Kind      `json:"kind"`
	Event   int       `json:"event"`
	Line    int       `json:"line,omitempty"`
	Site    string    `json:"site,omitempty"` // the site of the event named by Event
	Addr    Addr      `json:"addr"`
	Object  int       `json:"object,omitempty"` // the model's object number, from 1 in order made; 0: none
	Message string    `json:"message"`
	Related []Related `json:"related"`
}

// Totals counts objects (managed objects and raw blocks) and their bytes.
type Totals struct {
	Objects int    `json:"objects"`
	Bytes   uint64 `json:"bytes"`
}

// Report is the verdict on one trace, in the JSON shape of the contract
// (tlcheck replay --json). The fields beyond the contract's come after it.
type Report struct {
	Events         int         `json:"events"`
	Violations     []Violation `json:"violations"`
	Leaked         Totals      `json:"leaked"`
	StillReachable Totals      `json:"still_reachable"`
	Complete       bool        `json:"complete"`        // the trace reached end
	Objects        int         `json:"objects"`         // objects and blocks made
	PeakLiveBytes  uint64      `json:"peak_live_bytes"` // most bytes live at once
}
