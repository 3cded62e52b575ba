package suspect

import (
	"cmp"
	"slices"
)

// siteStat is what a Detector keeps of a site: its allocations' count and
// the gaps between them (in allocations), run-length coded. A site made
// at a steady period codes in a few runs; one whose gaps vary past
// maxRuns runs drops them and can no longer mark iterations.
type siteStat struct {
	name        string
	count       int
	first, last int // allocation numbers
	runs        []run
	irregular   bool
}

type run struct{ gap, n int }

// maxRuns bounds a site's runs of gaps.
const maxRuns = 256

// add counts an allocation at number b; keepAll keeps every gap (the
// site the user named marks iterations however irregular).
func (s *siteStat) add(b int, keepAll bool) {
	defer func() { s.count++; s.last = b }()
	if s.count == 0 {
		s.first = b
		return
	}
	if s.irregular {
		return
	}
	gap := b - s.last
	if n := len(s.runs); n > 0 && s.runs[n-1].gap == gap {
		s.runs[n-1].n++
		return
	}
	if len(s.runs) == maxRuns && !keepAll {
		s.irregular, s.runs = true, nil
		return
	}
	s.runs = append(s.runs, run{gap, 1})
}

// modalGap returns the most common gap (the shortest of equals) and the
// fraction of gaps that have it.
func (s *siteStat) modalGap() (int, float64) {
	if s.count < 2 || s.irregular {
		return 0, 0
	}
	by := make(map[int]int)
	for _, r := range s.runs {
		by[r.gap] += r.n
	}
	best, n := 0, 0
	for g, c := range by {
		if c > n || c == n && g < best {
			best, n = g, c
		}
	}
	return best, float64(n) / float64(s.count-1)
}

// births returns the site's allocation numbers.
func (s *siteStat) births() []int {
	out := make([]int, 0, s.count)
	b := s.first
	out = append(out, b)
	for _, r := range s.runs {
		for range r.n {
			b += r.gap
			out = append(out, b)
		}
	}
	return out
}

// Thresholds of the detection.
const (
	minSteady = 0.5  // a marker's gaps: at least half of one length
	minCover  = 0.5  // its steady gaps span at least half the allocations from its first
	minRepeat = 0.8  // the window repeats at the period at least this often
	tieRepeat = 0.02 // and within this of the best candidate's repeats
)

// detect returns the site that marks iterations, or -1.
//
// A training loop makes the same allocations, site after site, every
// iteration; its period P is the length of that pattern. Every site made
// once an iteration is a candidate whose usual gap is P. A site made
// several times an iteration has a shorter usual gap: a layer's, at
// which the pattern repeats too, but not across the iteration's ends
// (the loss, the optimizer). A site made every k iterations has gap kP,
// at which the pattern repeats as well as at P. So the period is the
// shortest candidate gap at which the window of allocation sites repeats
// as well as it does at any (within tieRepeat), and the marker the
// steadiest site with that gap, the first made where they tie (the
// iteration's first allocation, such as its input). A site made in one
// burst (a model's parameters, or what was live before the trace began)
// has a steady gap of 1 but stops long before the trace does: a
// candidate's steady gaps must span half of its allocations' span, which
// must reach within two gaps of the trace's last allocation.
func (d *Detector) detect() int32 {
	type cand struct {
		site   int32
		gap    int
		steady float64
		repeat float64
	}
	var cands []cand
	best := 0.0
	for i := range d.sites {
		s := &d.sites[i]
		if s.count < d.opts.MinIterations+1 {
			continue
		}
		g, f := s.modalGap()
		if g == 0 || f < minSteady || f*float64((s.count-1)*g) < minCover*float64(s.last-s.first) || d.births-s.last > 2*g {
			continue
		}
		r := d.repeats(g, s.births()[1])
		if r < minRepeat {
			continue
		}
		cands = append(cands, cand{int32(i), g, f, r})
		best = max(best, r)
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.gap, b.gap), cmp.Compare(b.steady, a.steady),
			cmp.Compare(d.sites[a.site].first, d.sites[b.site].first))
	})
	for _, c := range cands {
		if c.repeat >= best-tieRepeat {
			return c.site
		}
	}
	return -1
}

// repeats returns how often the window's sites from allocation from on
// repeat at gap: the fraction that are the same site gap allocations
// later. It starts at a candidate's second allocation, since a loop's
// first iteration often differs (an optimizer makes its state). A window
// too short to tell returns 1, leaving the gaps' steadiness to decide.
func (d *Detector) repeats(gap, from int) float64 {
	w := d.window
	if from+2*gap > len(w) {
		return 1
	}
	same, n := 0, 0
	for i := from; i+gap < len(w); i++ {
		n++
		if w[i] == w[i+gap] {
			same++
		}
	}
	return float64(same) / float64(n)
}
