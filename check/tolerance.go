package check

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/internal/safetext"
)

// Tolerance is the value of gate's --tolerance: how much leaked bytes and
// peak live bytes may grow over the baseline before the gate fails.
//
//	0        no growth at all (the default)
//	10%      up to 10% of the baseline's value, rounded down
//	4096     up to 4096 bytes; also 4KiB, 2MiB, 1GiB (powers of 1024)
//	10%,4KiB whichever of the two allows more
//
// A percentage of a baseline of 0 allows nothing: a trace that leaked
// nothing and now leaks fails under any percentage, which is the growth a
// gate is for; give bytes as well to allow a little.
type Tolerance struct {
	percent float64 // of the baseline value
	bytes   uint64  // absolute
	text    string  // as given, for messages
}

// Set parses a tolerance; it is a flag.Value.
func (t *Tolerance) Set(v string) error {
	var nt Tolerance
	parts := strings.Split(v, ",")
	if len(parts) > 2 {
		return fmt.Errorf("%q: want a percentage, bytes, or both separated by a comma", safetext.Clip(v))
	}
	var seenPct, seenBytes bool
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if num, ok := strings.CutSuffix(p, "%"); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || seenPct {
				return fmt.Errorf("%q: a percentage must be a non-negative number such as 10%%, given once", safetext.Clip(v))
			}
			nt.percent, seenPct = f, true
			continue
		}
		n, err := parseBytes(p)
		if err != nil || seenBytes {
			return fmt.Errorf("%q: want a percentage (10%%) or bytes (4096, 4KiB, 2MiB, 1GiB), or one of each", safetext.Clip(v))
		}
		nt.bytes, seenBytes = n, true
	}
	nt.text = v
	*t = nt
	return nil
}

func (t *Tolerance) String() string {
	if t.text == "" {
		return "0"
	}
	return t.text
}

// parseBytes parses a byte count with an optional binary suffix.
func parseBytes(s string) (uint64, error) {
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if n > math.MaxUint64/mult {
		return 0, strconv.ErrRange
	}
	return n * mult, nil
}

// Allowed is the most a metric whose baseline is was may reach.
func (t Tolerance) Allowed(was uint64) uint64 {
	byPct := uint64(math.MaxUint64)
	if f := float64(was) * t.percent / 100; f < math.MaxUint64 { // 2^64: the conversion is exact below it
		byPct = uint64(f) // rounds down
	}
	grow := max(byPct, t.bytes)
	if was > math.MaxUint64-grow {
		return math.MaxUint64
	}
	return was + grow
}

// Growth is one metric of a trace against the baseline.
type Growth struct {
	Name    string // "leaked bytes", "peak live bytes"
	Was     uint64 // in the baseline
	Now     uint64 // in this run
	Allowed uint64 // the most the tolerance allows
}

// Exceeded reports whether the metric grew beyond the tolerance.
func (g Growth) Exceeded() bool { return g.Now > g.Allowed }

func (g Growth) String() string {
	s := fmt.Sprintf("%s %d (baseline %d", g.Name, g.Now, g.Was)
	if g.Allowed != g.Was {
		s += fmt.Sprintf(", allowed up to %d", g.Allowed)
	}
	s += ")"
	if g.Exceeded() {
		s += ": grew beyond the tolerance"
	}
	return s
}
