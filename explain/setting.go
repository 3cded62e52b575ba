package explain

import (
	"fmt"
	"strconv"
	"strings"
)

// Setting is one configuration of PyTorch's caching allocator, as
// PYTORCH_CUDA_ALLOC_CONF writes it.
type Setting struct {
	// Conf is the setting as PYTORCH_CUDA_ALLOC_CONF writes it; "" is
	// PyTorch's default.
	Conf string `json:"conf"`
	// MaxSplitSize is max_split_size_mb in bytes; 0 is unlimited.
	MaxSplitSize uint64 `json:"max_split_size"`
	// ExpandableSegments is expandable_segments:True, which impl/gpu
	// models (gpu.CachingOptions.ExpandableSegments).
	ExpandableSegments bool `json:"expandable_segments,omitempty"`
	// The options impl/gpu does not model: a setting with any of them
	// set is reported, not replayed.
	RoundupPower2Divisions     int     `json:"roundup_power2_divisions,omitempty"`
	GarbageCollectionThreshold float64 `json:"garbage_collection_threshold,omitempty"`
}

// String names the setting: its Conf, or "default".
func (s Setting) String() string {
	if s.Conf == "" {
		return "default"
	}
	return s.Conf
}

// unmodelled says which of s's options impl/gpu's allocator does not
// model, or "" when it models them all.
func (s Setting) unmodelled() string {
	var out []string
	if s.RoundupPower2Divisions != 0 {
		out = append(out, "roundup_power2_divisions")
	}
	if s.GarbageCollectionThreshold != 0 {
		out = append(out, "garbage_collection_threshold")
	}
	if out == nil {
		return ""
	}
	return strings.Join(out, ", ") + ": not modelled by impl/gpu's caching allocator"
}

// ParseSetting reads a PYTORCH_CUDA_ALLOC_CONF value: comma-separated
// key:value options among max_split_size_mb (a whole number of MiB, at
// least 20, as PyTorch requires), expandable_segments (True or False),
// roundup_power2_divisions (a power of 2) and
// garbage_collection_threshold (above 0, below 1). "" and "default" are
// PyTorch's default.
func ParseSetting(conf string) (Setting, error) {
	conf = strings.TrimSpace(conf)
	if conf == "" || conf == "default" {
		return Setting{}, nil
	}
	s := Setting{Conf: conf}
	for opt := range strings.SplitSeq(conf, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(opt), ":")
		if !ok {
			return s, fmt.Errorf("%q: want key:value", opt)
		}
		switch key {
		case "max_split_size_mb":
			mb, err := strconv.ParseUint(val, 10, 32)
			if err != nil || mb < 20 {
				return s, fmt.Errorf("max_split_size_mb:%s: want a whole number of MiB, at least 20", val)
			}
			s.MaxSplitSize = mb << 20
		case "expandable_segments":
			switch val {
			case "True", "true", "1":
				s.ExpandableSegments = true
			case "False", "false", "0":
			default:
				return s, fmt.Errorf("expandable_segments:%s: want True or False", val)
			}
		case "roundup_power2_divisions":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n&(n-1) != 0 {
				return s, fmt.Errorf("roundup_power2_divisions:%s: want a power of 2", val)
			}
			s.RoundupPower2Divisions = n
		case "garbage_collection_threshold":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f <= 0 || f >= 1 {
				return s, fmt.Errorf("garbage_collection_threshold:%s: want a fraction above 0 and below 1", val)
			}
			s.GarbageCollectionThreshold = f
		default:
			return s, fmt.Errorf("%q: unknown option (want max_split_size_mb, expandable_segments, roundup_power2_divisions or garbage_collection_threshold)", key)
		}
	}
	return s, nil
}

// DefaultSettings are the what-ifs tried when none are given: PyTorch's
// default, max_split_size_mb at four sizes, expandable_segments:True
// (which PyTorch's out-of-memory message suggests), and the options
// impl/gpu does not model (listed so that a reader knows they were not
// tried).
func DefaultSettings() []Setting {
	var out []Setting
	for _, c := range []string{"", "max_split_size_mb:32", "max_split_size_mb:128", "max_split_size_mb:512",
		"max_split_size_mb:2048", "expandable_segments:True", "roundup_power2_divisions:4",
		"garbage_collection_threshold:0.8"} {
		s, err := ParseSetting(c)
		if err != nil {
			panic(err) // the list above is the package's own
		}
		out = append(out, s)
	}
	return out
}
