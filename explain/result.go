package explain

import "github.com/tlcheck/tlcheck/traces/torchsnap"

// Explanation is what Explain found, in the shape of its JSON (the field
// tags): plain values for any view (the text report, JSON, the HTML
// page). Sizes are bytes.
type Explanation struct {
	// Recorded is the setting the snapshot was recorded under, and
	// RecordedFrom where it came from: "given" (Options.Recorded),
	// "snapshot" (its allocator_settings) or "default" (PyTorch's, for a
	// snapshot without allocator_settings).
	Recorded     Setting `json:"recorded"`
	RecordedFrom string  `json:"recorded_from"`
	// Capacity is the most the process could reserve: what it had
	// reserved at the out-of-memory error plus what the device then had
	// free (CapacityFrom "oom"), the caller's (CapacityFrom "given"), or
	// 0 where neither is known (CapacityFrom "unknown": the replays run on
	// a device without limit).
	Capacity     uint64 `json:"capacity"`
	CapacityFrom string `json:"capacity_from"`
	// OOM explains the snapshot's last oom entry; nil when it has none.
	OOM *OOM `json:"oom"`
	// Seeded is how many blocks were live before the trace began: each
	// replay starts by making them, segment by segment, in address
	// order. SeedExact says each landed where the snapshot had it.
	Seeded    int  `json:"seeded"`
	SeedExact bool `json:"seed_exact"`
	// Validation holds the replay under Recorded to the snapshot.
	Validation Validation `json:"validation"`
	// WhatIf is one outcome per setting tried, Recorded first.
	WhatIf []Outcome `json:"what_if"`
}

// OOM is the state at an out-of-memory error: the request and what the
// allocator held, from the replay under the recorded setting.
type OOM struct {
	Event   int    `json:"event"` // the event it came before
	Request uint64 `json:"request"`
	Stream  int64  `json:"stream"`
	Site    string `json:"site"`
	// Stack is the request's Python frames, innermost first, where the
	// snapshot was read with torchsnap.Limits.Stacks; never null in JSON.
	Stack      []torchsnap.Frame `json:"stack"`
	DeviceFree uint64            `json:"device_free"`
	// Allocated is what tensors held (blocks handed out), Reserved what
	// the allocator's segments held, and ReservedFree the difference:
	// cached, free, and too fragmented or on the wrong pool or stream to
	// serve the request.
	Allocated    uint64 `json:"allocated"`
	Reserved     uint64 `json:"reserved"`
	ReservedFree uint64 `json:"reserved_free"`
	// Pools is the cache by pool and stream, Sites the sites whose live
	// blocks held the most, the most first.
	Pools []Pool     `json:"pools"`
	Sites []SiteHeld `json:"sites"`
}

// Pool is one pool ("small" or "large") on one stream at the error.
type Pool struct {
	Pool        string `json:"pool"`
	Stream      int64  `json:"stream"`
	Segments    int    `json:"segments"`
	Reserved    uint64 `json:"reserved"`
	Free        uint64 `json:"free"`
	LargestFree uint64 `json:"largest_free"`
}

// SiteHeld is what a site's live blocks held at the error (the sizes
// the trace gives: the sizes asked for).
type SiteHeld struct {
	Site   string `json:"site"`
	Blocks int    `json:"blocks"`
	Bytes  uint64 `json:"bytes"`
}

// Validation is the replay under the recorded setting held to the
// snapshot: its reserved bytes against the snapshot's segments after
// every run of segment_alloc and segment_free entries, and at an
// out-of-memory error, whether it ran out too.
type Validation struct {
	Compared int `json:"compared"` // comparisons made: after each alloc, free and oom entry
	// SameAddress is how many of the trace's allocations the replay
	// handed out at the snapshot's own address (its segments are placed
	// where the snapshot's are): all of them, where it agrees block for
	// block.
	SameAddress int  `json:"same_address"`
	Allocs      int  `json:"allocs"`  // the trace\'s allocations replayed
	Checked     int  `json:"checked"` // segment entries the comparisons covered
	Agrees      bool `json:"agrees"`
	// Disagreement says where and how it first disagreed; "" when it
	// agrees.
	Disagreement string `json:"disagreement,omitempty"`
}

// Outcome is one setting's replay.
type Outcome struct {
	Setting Setting `json:"setting"`
	// Modelled is false for a setting impl/gpu cannot replay; Why says
	// which option, and nothing else is set.
	Modelled bool   `json:"modelled"`
	Why      string `json:"why,omitempty"`
	// PeakReserved and PeakAllocated are the replay's peaks, to the
	// out-of-memory error (the request included where it fits), or to
	// the end.
	PeakReserved  uint64 `json:"peak_reserved"`
	PeakAllocated uint64 `json:"peak_allocated"`
	// Fits says the request at the error would have been served; false
	// where the snapshot has no oom entry.
	Fits bool `json:"fits"`
	// RanOutAt is the event at which the replay itself ran out of
	// memory before reaching the error (-1: it did not).
	RanOutAt int `json:"ran_out_at"`
}
