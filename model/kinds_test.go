package model

import (
	"reflect"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
	"unsafe"
)

// TestKindRows holds every kind's row to every field, so that a kind added
// without saying its space, nouns, end or class fails here, by name.
func TestKindRows(t *testing.T) {
	for k := range nKinds {
		if missing := missingFields(kinds[k]); len(missing) > 0 {
			t.Errorf("kind %d (%q): its row lacks %v", k, kinds[k].noun, missing)
		}
	}
	// The check can fail: a row with a field left out is caught, by name.
	broken := kinds[kPool]
	broken.atEnd = 0
	if got := missingFields(broken); !slices.Equal(got, []string{"atEnd"}) {
		t.Errorf("a row without atEnd: missingFields says %v", got)
	}
}

// TestOpMasks holds the kinds each op names (opMasks, from its row's
// Names through the kinds' thing) to what lookup needs: every kind of
// thing an op names is some kind's row, the kinds lie in one space, and
// the mask has a name for messages (one kind's what, or a maskWhat entry).
func TestOpMasks(t *testing.T) {
	for _, op := range traces.Ops() {
		names := op.Names()
		if names == 0 {
			continue
		}
		mask := opMasks[op]
		for th := traces.Things(1); th != 0 && th <= names; th <<= 1 {
			if names&th == 0 {
				continue
			}
			found := false
			for k := range nKinds {
				found = found || kinds[k].thing == th
			}
			if !found {
				t.Errorf("op %s: names traces.Things %#x, which no kind's row (kinds.go) is: give the kind its thing", op, th)
			}
		}
		for k := range nKinds {
			if mask&k.mask() != 0 && kinds[k].space != spaceOf(mask) {
				t.Errorf("op %s: names kinds in two spaces: %q is not in space %d", op, kinds[k].noun, spaceOf(mask))
			}
		}
		if _, ok := maskName(mask); !ok {
			t.Errorf("op %s: names several kinds (mask %b) that maskWhat (kinds.go) has no name for", op, mask)
		}
	}
}

// missingFields names the fields of row left at their zero value.
func missingFields(row kindRow) []string {
	var missing []string
	v := reflect.ValueOf(row)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			missing = append(missing, v.Type().Field(i).Name)
		}
	}
	return missing
}

// TestThingSize holds a thing to the 64 bytes model/doc.go promises: a
// large heap log keeps millions of dead blocks.
func TestThingSize(t *testing.T) {
	if n := unsafe.Sizeof(thing{}); n != 64 {
		t.Errorf("a thing is %d bytes, want 64", n)
	}
}
