package drive

import (
	"slices"

	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// shrinkLong is the first pass over a long failing program, before
// flat.ShrinkWith's delta debugging: it removes what delta debugging
// over contiguous chunks cannot, the deep shapes of GenerateProgram. A
// scope block (a scope_enter, its matching scope_exit and all between) goes
// whole, largest first, as a block of code is deleted; and a count taken
// up and brought down again (acquires of an object, and releases of it
// later on) goes by pairs, all of them at once, then halves, down to one
// pair: removing the acquires alone, or the releases, would change the
// failure. fails is Shrink's: it runs a candidate and keeps it if it fails
// the same way.
func shrinkLong(p flat.Program, fails func(flat.Program) (flat.Program, bool)) flat.Program {
	p = dropBlocks(p, fails)
	return dropCountPairs(p, fails)
}

// dropBlocks removes whole scope blocks, the largest first, until none
// can go.
func dropBlocks(p flat.Program, fails func(flat.Program) (flat.Program, bool)) flat.Program {
	for {
		gone := false
		for _, b := range scopeBlocks(p) {
			c := flat.Program{Steps: slices.Concat(p.Steps[:b[0]], p.Steps[b[1]:])}
			if made, ok := fails(c); ok {
				p, gone = made, true
				break // the blocks moved: find them again
			}
		}
		if !gone {
			return p
		}
	}
}

// scopeBlocks returns p's scope blocks as [start, end) step ranges, the
// longest first; blocks of fewer than 3 steps are left to delta debugging.
func scopeBlocks(p flat.Program) [][2]int {
	var open []int
	var blocks [][2]int
	for i, s := range p.Steps {
		switch s.Op {
		case traces.OpScopeEnter:
			open = append(open, i)
		case traces.OpScopeExit:
			if n := len(open); n > 0 {
				if i+1-open[n-1] >= 3 {
					blocks = append(blocks, [2]int{open[n-1], i + 1})
				}
				open = open[:n-1]
			}
		}
	}
	slices.SortStableFunc(blocks, func(a, b [2]int) int { return (b[1] - b[0]) - (a[1] - a[0]) })
	return blocks
}

// dropCountPairs removes pairs of an acquire and a later release of the
// same ref, many pairs at a time.
func dropCountPairs(p flat.Program, fails func(flat.Program) (flat.Program, bool)) flat.Program {
	pairs := countPairs(p)
	for size := len(pairs); size >= 1 && len(pairs) > 0; size /= 2 {
		for i := 0; i+size <= len(pairs); {
			drop := map[int]bool{}
			for _, pr := range pairs[i : i+size] {
				drop[pr[0]], drop[pr[1]] = true, true
			}
			c := flat.Program{Steps: make([]flat.Step, 0, len(p.Steps))}
			for k, s := range p.Steps {
				if !drop[k] {
					c.Steps = append(c.Steps, s)
				}
			}
			if made, ok := fails(c); ok {
				p = made
				if pairs = countPairs(p); len(pairs) == 0 {
					return p
				}
				size = min(size, len(pairs))
				continue // the pairs moved: the next ones now start at i
			}
			i += size
		}
	}
	return p
}

// countPairs matches each acquire with the first later release of the
// same ref not matched yet.
func countPairs(p flat.Program) [][2]int {
	var pairs [][2]int
	used := map[int]bool{}
	for i, s := range p.Steps {
		if s.Op != traces.OpAcquire || s.Target.Pick == flat.Null {
			continue
		}
		for j := i + 1; j < len(p.Steps); j++ {
			if t := p.Steps[j]; t.Op == traces.OpRelease && t.Target == s.Target && !used[j] {
				used[j] = true
				pairs = append(pairs, [2]int{i, j})
				break
			}
		}
	}
	return pairs
}
