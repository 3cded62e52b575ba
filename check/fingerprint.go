package check

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// Fingerprint identifies a finding across runs: its kind, the site of the
// event that did it, and the site where the thing it concerns was
// allocated (the "allocated" related event), either of which may be "".
type Fingerprint struct {
	Kind      traces.Kind `json:"kind"`
	Site      string      `json:"site"`
	AllocSite string      `json:"alloc_site"`
}

// FingerprintOf is v's fingerprint.
func FingerprintOf(v *traces.Violation) Fingerprint {
	f := Fingerprint{Kind: v.Kind, Site: v.Site}
	for _, r := range v.Related {
		if r.What == "allocated" {
			f.AllocSite = r.Site
			break
		}
	}
	return f
}

// Hash is the fingerprint as a short opaque string, for SARIF's
// partialFingerprints. A NUL separates the parts: only sites that hold a
// NUL of their own could collide, and sites are source locations.
func (f Fingerprint) Hash() string {
	sum := sha256.Sum256([]byte(string(f.Kind) + "\x00" + f.Site + "\x00" + f.AllocSite))
	return hex.EncodeToString(sum[:16])
}

func (f Fingerprint) String() string {
	s := string(f.Kind)
	if f.Site != "" {
		s += " at " + f.Site
	}
	if f.AllocSite != "" {
		s += " allocated at " + f.AllocSite
	}
	return s
}

// Compare orders fingerprints by kind, site and allocation site.
func (f Fingerprint) Compare(g Fingerprint) int {
	return cmp.Or(
		strings.Compare(string(f.Kind), string(g.Kind)),
		strings.Compare(f.Site, g.Site),
		strings.Compare(f.AllocSite, g.AllocSite))
}
