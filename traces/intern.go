package traces

import "hash/maphash"

// interner turns the short strings a trace repeats (sites, variable and
// parameter names, kinds, threads) into Go strings without allocating
// once a string has been seen. It is a set-associative cache of bounded
// size: a trace with a million events at one site allocates that site's
// string once, and one with more distinct strings than slots still reads
// in bounded memory, allocating for the strings that evict each other.
type interner struct {
	seed  maphash.Seed
	slots [internSets * internWays]string
}

const (
	internSets = 256 // a power of two
	internWays = 4   // strings per set, most recently used first
	internMax  = 128 // longer strings are not cached
)

func (in *interner) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > internMax {
		return string(b)
	}
	i := int(maphash.Bytes(in.seed, b)&(internSets-1)) * internWays
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
	s := string(b)
	copy(set[1:], set[:internWays-1])
	set[0] = s
	return s
}
