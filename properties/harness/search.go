package harness

// Search runs the programs l draws from seed until one fails or more(n)
// returns false, n being how many ran. It returns the failing program and
// its failure (nil if none failed) and how many programs ran. The same
// seed gives the same programs.
//
// A failure that does not show in its trace (Failure.Hidden) does not end
// the search at once where l has a Grace: up to Grace more programs run
// for one that shows, and if none does the first is returned.
func Search[P any](l Language[P], seed uint64, more func(n int) bool) (P, *Failure, int) {
	r := l.Rand(seed)
	var firstP P
	var first *Failure
	n, until := 0, 0
	for more(n) && (first == nil || n < until) {
		p := l.Generate(r, n)
		n++
		f := l.Run(p)
		switch {
		case f == nil:
		case !f.Hidden || l.Grace == 0:
			return p, f, n
		case first == nil:
			firstP, first, until = p, f, n+l.Grace
		}
	}
	return firstP, first, n
}

// maxShrinkRuns bounds the runs the driver makes over Candidates: it only
// guarantees that shrinking ends.
const maxShrinkRuns = 20000

// Shrink returns the smallest program it finds that fails as p does (f
// being p's failure), with that program's failure; never a nil failure:
// where nothing smaller fails the same way, p and f themselves.
//
// It calls l.Shrink where the language has one. Otherwise it takes, again
// and again, the first of l.Candidates that breaks the same property with
// the same kind, until none does.
func Shrink[P any](l Language[P], p P, f *Failure) (P, *Failure) {
	if l.Shrink != nil {
		if q, g := l.Shrink(p, f); g != nil {
			return q, g
		}
		return p, f
	}
	if l.Candidates == nil {
		return p, f
	}
	for runs, progress := 0, true; progress && runs < maxShrinkRuns; {
		progress = false
		for _, c := range l.Candidates(p) {
			runs++
			if g := l.Run(c); g != nil && g.Property == f.Property && g.Kind == f.Kind {
				p, f, progress = c, g, true
				break
			}
		}
	}
	return p, f
}
