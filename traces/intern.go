package traces

// interner turns the short strings a trace repeats (sites, variable and
// parameter names, kinds, threads) into Go strings without allocating
// once a string has been seen. It is a set-associative cache of bounded
// size: a trace with a million events at one site allocates that site's
// string once, and one with more distinct strings than slots still reads
// in bounded memory, allocating for the strings that evict each other.
//
// Its hash is FNV-1a, with no seed: the same trace takes the same path
// through the table on every read, which coverage-guided fuzzing needs (a
// random seed made the hits and evictions of one input differ from run to
// run, and Go's fuzzer took each difference for new coverage). A trace
// written to collide costs allocations, not time: a set holds internWays
// strings, however many collide.
type interner struct {
	slots []string // sets of internWays; the number of sets a power of two
	// misses counts the strings made since the table last grew. The table
	// starts with minInternSets sets and grows fourfold, up to internSets,
	// once it has made half as many strings as it holds: it is a cache, so
	// growing it is making a bigger empty one, and a short trace (a property
	// test reads back thousands a second) clears no more than it uses.
	misses int
}

const (
	internSets    = 256 // a power of two: the most sets
	minInternSets = 8   // a power of two: the sets to start with
	internWays    = 4   // strings per set, most recently used first
	internMax     = 128 // longer strings are not cached
)

func (in *interner) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > internMax {
		return string(b)
	}
	if len(in.slots) == 0 {
		in.slots = make([]string, minInternSets*internWays)
	}
	h := fnv1a(b)
	i := int(h&uint64(len(in.slots)/internWays-1)) * internWays
	set := in.slots[i : i+internWays : i+internWays]
	for j, s := range set {
		if s == string(b) {
			if j > 0 {
				copy(set[1:j+1], set[:j])
				set[0] = s
			}
			return s
		}
	}
	if in.misses++; in.misses > len(in.slots)/2 && len(in.slots) < internSets*internWays {
		in.slots = make([]string, min(4*len(in.slots), internSets*internWays))
		in.misses = 0
		i = int(h&uint64(len(in.slots)/internWays-1)) * internWays
		set = in.slots[i : i+internWays : i+internWays]
	}
	s := string(b)
	copy(set[1:], set[:internWays-1])
	set[0] = s
	return s
}

// fnv1a is the 64-bit FNV-1a hash of b.
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
