package suspect

import (
	"cmp"
	"slices"
	"sort"
)

// evidenceEach is how many of a suspect's first and last blocks it shows.
const evidenceEach = 3

// suspects finds the sites whose blocks still live grow steadily over the
// complete iterations, which begin at the allocation numbers marks (the
// last one in progress).
//
// A block still live that was made in a complete iteration was kept past
// it. A loop that keeps nothing keeps no block of one site iteration after
// iteration: what the first iteration makes once (an optimizer's state)
// is one iteration's, and what the next frees (the previous input, the
// previous loss) lives only in the last one. A site is a suspect when
// its kept blocks run from some iteration to the last complete one, over
// MinIterations at least, most iterations keeping the same number.
func (d *Detector) suspects(marks []int) []Suspect {
	complete := len(marks) - 1
	type kept struct {
		count []int
		bytes []uint64
		recs  []liveRec
	}
	bySite := make(map[int32]*kept)
	for _, r := range d.live {
		k := sort.SearchInts(marks, r.birth+1) - 1 // the last mark at or before birth
		if k < 0 || k >= complete {
			continue // before the loop, or in the iteration in progress
		}
		ks := bySite[r.site]
		if ks == nil {
			ks = &kept{count: make([]int, complete), bytes: make([]uint64, complete)}
			bySite[r.site] = ks
		}
		ks.count[k]++
		ks.bytes[k] += r.size
		ks.recs = append(ks.recs, r)
	}
	out := []Suspect{}
	for site, ks := range bySite {
		first := slices.IndexFunc(ks.count, func(c int) bool { return c > 0 })
		span := complete - first
		if span < d.opts.MinIterations {
			continue
		}
		run := ks.count[first:]
		mode, same := modeOf(run)
		steady := float64(same) / float64(span)
		if mode == 0 || steady < 0.75 {
			continue
		}
		s := Suspect{Site: d.sites[site].name, BlocksPerIteration: mode, FirstIteration: first,
			IterationsSeen: span, Complete: complete, Steadiness: steady}
		for k := first; k < complete; k++ {
			s.Blocks += ks.count[k]
			s.Bytes += ks.bytes[k]
		}
		s.BytesPerIteration = (s.Bytes + uint64(span)/2) / uint64(span)
		s.Confidence = confidence(span, steady)
		slices.SortFunc(ks.recs, func(a, b liveRec) int { return cmp.Compare(a.birth, b.birth) })
		recs := ks.recs
		if len(recs) > 2*evidenceEach {
			recs = append(recs[:evidenceEach:evidenceEach], recs[len(recs)-evidenceEach:]...)
		}
		for _, r := range recs {
			it := sort.SearchInts(marks, r.birth+1) - 1
			s.Evidence = append(s.Evidence, Block{Event: r.made, Addr: r.addr, Size: r.size, Iteration: it})
		}
		s.Stack = []Frame{}
		if d.opts.Stack != nil && len(s.Evidence) > 0 {
			if st := d.opts.Stack(s.Evidence[0].Event); st != nil {
				s.Stack = st
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Suspect) int {
		return cmp.Or(cmp.Compare(b.BytesPerIteration, a.BytesPerIteration), cmp.Compare(a.Site, b.Site))
	})
	return out
}

// modeOf returns the most common non-zero count (the largest of equals)
// and how many times it comes.
func modeOf(xs []int) (mode, n int) {
	by := make(map[int]int)
	for _, x := range xs {
		if x > 0 {
			by[x]++
		}
	}
	for x, c := range by {
		if c > n || c == n && x > mode {
			mode, n = x, c
		}
	}
	return mode, n
}

// confidence words how sure a suspect is.
func confidence(span int, steady float64) string {
	switch {
	case span >= 8 && steady == 1:
		return "high"
	case span >= 5 && steady >= 0.9:
		return "medium"
	}
	return "low"
}
