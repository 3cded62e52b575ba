package model

import (
	"reflect"
	"slices"
	"testing"
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
	// The masks the ops name each lie in one space, as lookup assumes.
	for _, m := range []kindMask{freeable, onlyBlock, objectMask, segmentMask, poolMask} {
		for k := range nKinds {
			if m&k.mask() != 0 && kinds[k].space != spaceOf(m) {
				t.Errorf("mask %b spans spaces: %q is not in space %d", m, kinds[k].noun, spaceOf(m))
			}
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
