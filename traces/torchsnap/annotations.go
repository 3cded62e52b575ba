package torchsnap

import (
	"fmt"
	"strings"
)

// Annotation is one of a snapshot's external_annotations: the start or
// end of a region PyTorch marks while it records (an optimizer's step:
// "Optimizer.step#AdamW.step"; torch.profiler.record_function's regions).
type Annotation struct {
	Stage string // "START" or "END"
	Name  string
	T     int64 // ns, as an event's t; 0 where it has no time
}

// Annotations returns the snapshot's external_annotations, as it lists
// them (PyTorch lists them oldest first).
func (r *Reader) Annotations() []Annotation { return r.sh.annots }

func (sh *shaper) finishAnnotation(o *obj, pl place) error {
	var a Annotation
	var err error
	if a.Stage, err = strField(o, 0, "stage", pl); err != nil {
		return err
	}
	if a.Name, err = strField(o, 1, "name", pl); err != nil {
		return err
	}
	if o.has(2) {
		us, err := intField(o, 2, "time_us", pl)
		if err != nil {
			return err
		}
		if us > 0 && us < 1<<53 {
			a.T = us * 1000
		}
	}
	a.Stage, a.Name = strings.Clone(a.Stage), strings.Clone(a.Name)
	sh.siteBytes += int64(len(a.Stage)+len(a.Name)) + 40
	if sh.siteBytes > sh.maxSites {
		return &Error{Where: pl.String(), Err: fmt.Errorf("the snapshot's distinct sites, stacks and annotations take more than %d bytes, the most tlcheck holds (Limits.MaxSites)", sh.maxSites)}
	}
	sh.annots = append(sh.annots, a)
	return nil
}
