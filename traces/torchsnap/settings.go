package torchsnap

import (
	"fmt"
	"math"
)

// Settings are the caching allocator's settings a snapshot was recorded
// under: its allocator_settings (PyTorch 2.4 and later), the options
// tlcheck reads.
type Settings struct {
	// Conf is PYTORCH_CUDA_ALLOC_CONF as the process had it ("" unset).
	Conf string
	// MaxSplitSize is max_split_size in bytes; 0 is unlimited (PyTorch
	// writes -1, or the largest size_t on older releases).
	MaxSplitSize uint64
	// ExpandableSegments and GarbageCollectionThreshold are those
	// options (false and 0 when off).
	ExpandableSegments         bool
	GarbageCollectionThreshold float64
}

// Settings returns the snapshot's allocator settings; ok is false where
// it has none (a snapshot older than PyTorch 2.4).
func (r *Reader) Settings() (s Settings, ok bool) { return r.sh.settings, r.sh.hasSettings }

func (sh *shaper) finishSettings(o *obj, pl place) error {
	var s Settings
	if o.has(0) {
		v := o.field(0)
		if v.k != kStr {
			return &Error{Where: pl.fieldOf("PYTORCH_CUDA_ALLOC_CONF").String(), Err: fmt.Errorf("want a string, got %s", typeName(v))}
		}
		s.Conf = v.str()
	}
	if o.has(1) {
		switch v := o.field(1); {
		case v.k == kInt && v.i > 0 && v.i < math.MaxInt64:
			s.MaxSplitSize = uint64(v.i)
		case v.k == kInt || v.k == kUint: // -1, or SIZE_MAX: unlimited
		default:
			return &Error{Where: pl.fieldOf("max_split_size").String(), Err: fmt.Errorf("want an integer, got %s", typeName(v))}
		}
	}
	if o.has(2) {
		v := o.field(2)
		if v.k != kBool {
			return &Error{Where: pl.fieldOf("expandable_segments").String(), Err: fmt.Errorf("want a bool, got %s", typeName(v))}
		}
		s.ExpandableSegments = v.i != 0
	}
	if o.has(3) {
		switch v := o.field(3); v.k {
		case kFloat:
			s.GarbageCollectionThreshold = math.Float64frombits(uint64(v.i))
		case kInt:
			s.GarbageCollectionThreshold = float64(v.i)
		default:
			return &Error{Where: pl.fieldOf("garbage_collection_threshold").String(), Err: fmt.Errorf("want a number, got %s", typeName(v))}
		}
	}
	sh.settings, sh.hasSettings = s, true
	return nil
}
