package suspect

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Options configure a search for suspects; the zero value detects the
// iteration.
type Options struct {
	// Iteration is the site of an allocation made once at the start of
	// every iteration (a batch moved to the device: "train.py:31"), which
	// ends the detection; "" detects it. A site written in full matches;
	// so does its end after a '/' ("train.py:31" names
	// "/home/me/train.py:31").
	Iteration string
	// MinIterations is the fewest iterations a site's kept blocks must
	// span to be a suspect (default 3).
	MinIterations int
	// Stack, when not nil, returns the stack of what made event n (a
	// snapshot's Python frames: input.Input.Stack); a suspect shows its
	// first kept block's.
	Stack func(n int) []Frame
	// Annotations are named instants of the trace, in time order: a
	// snapshot's external_annotations that START ("Optimizer.step#
	// AdamW.step"). IterationAnnotation names the one that starts each
	// iteration (its name, or the part before '#'); where it is "" and
	// no site is found to mark iterations, the name that recurs most
	// marks them. They need the events' times (t).
	Annotations         []Annotation
	IterationAnnotation string
}

// Annotation is a named instant of a trace: T is in ns, as events' t.
type Annotation struct {
	Name string
	T    int64
}

// Frame is one frame of a stack, innermost first.
type Frame struct {
	File string `json:"file"`
	Line int64  `json:"line"`
	Name string `json:"name"`
}

// Result is what a search found, in the shape of tlcheck's JSON (the
// field tags): the iteration it used and the suspects, the largest
// growth first. It is a plain value for any view (text, JSON, SARIF, the
// HTML page).
type Result struct {
	// Iteration is how the loop was cut into iterations; Site is "" when
	// no period was found (Reason says why) and no suspect can be named.
	Iteration Iteration `json:"iteration"`
	// Suspects are the sites whose live blocks grow steadily, the most
	// bytes per iteration first; never null in JSON.
	Suspects []Suspect `json:"suspects"`
}

// Iteration is the period a search used.
type Iteration struct {
	Site string `json:"site"`
	// Annotation, where not "", is the annotation that marked the
	// iterations instead of a site.
	Annotation string `json:"annotation,omitempty"`
	// Named says the user named the site or annotation; else it was
	// detected.
	Named bool `json:"named"`
	// Count is the iterations seen: the marker's allocations. The last
	// one is taken to be in progress when the snapshot was taken, so
	// Count-1 are complete.
	Count int `json:"count"`
	// Allocations is how many allocations an iteration makes, the most
	// common gap between two of the marker's, and Steadiness the
	// fraction of gaps of that length (1: every iteration alike).
	Allocations int     `json:"allocations"`
	Steadiness  float64 `json:"steadiness"`
	// Reason says why no iteration was found; "" when one was.
	Reason string `json:"reason,omitempty"`
}

// Suspect is a site whose live blocks grow by a steady amount an
// iteration and are never freed.
type Suspect struct {
	Site string `json:"site"`
	// BlocksPerIteration and BytesPerIteration are the growth: the most
	// common count of blocks kept from one iteration, and the bytes kept
	// over the run divided by its iterations.
	BlocksPerIteration int    `json:"blocks_per_iteration"`
	BytesPerIteration  uint64 `json:"bytes_per_iteration"`
	// FirstIteration is the first complete iteration (from 0) whose
	// blocks are still live; the run lasts to the last complete one.
	// IterationsSeen is its length, of Complete complete iterations.
	FirstIteration int `json:"first_iteration"`
	IterationsSeen int `json:"iterations_seen"`
	Complete       int `json:"iterations_complete"`
	// Steadiness is the fraction of the run's iterations that kept
	// exactly BlocksPerIteration blocks.
	Steadiness float64 `json:"steadiness"`
	// Confidence sums up how sure the search is: "high" (8 iterations
	// or more, all alike), "medium" (5 or more, 90% alike) or "low".
	Confidence string `json:"confidence"`
	// Blocks and Bytes are what the run keeps in all.
	Blocks int    `json:"blocks"`
	Bytes  uint64 `json:"bytes"`
	// Evidence is a few of the kept blocks: the first and the last.
	Evidence []Block `json:"evidence"`
	// Stack is the first kept block's stack, where Options.Stack gives
	// one; never null in JSON.
	Stack []Frame `json:"stack"`
}

// Block is one kept block: the event that made it, where and how large,
// and in which iteration.
type Block struct {
	Event     int         `json:"event"`
	Addr      traces.Addr `json:"addr"`
	Size      uint64      `json:"size"`
	Iteration int         `json:"iteration"`
}

// Find replays src through the model and returns its suspects. Its error
// is the source's, or an Options.Iteration that names no allocation.
func Find(src traces.Source, opts Options) (*Result, error) {
	d := New(opts)
	w := &model.Watch{Event: d.Event, Born: d.Born, Died: d.Died}
	// Violations are replay's to report: a suspect search hears only of lives.
	if _, err := model.ReplayWatched(src, w, func(traces.Violation, uint64) {}); err != nil {
		return nil, err
	}
	return d.Result()
}

// Detector finds suspects in the lives a model.Watch tells of: call
// Event, Born and Died from its hooks, then Result. Its memory is the live blocks,
// the distinct sites with a bounded summary of each, and the first
// allocations' sites (a bounded window).
type Detector struct {
	opts   Options
	sites  []siteStat
	siteN  map[string]int32
	window []int32 // the site of each of the first windowSize allocations
	births int     // allocations so far
	live   map[int]liveRec
	named  int32 // the site Options.Iteration names, once met; -1 before
	now    int64 // the current event's time
	annots []*annotMarks
}

// annotMarks are the iterations one annotation's name marks: the
// allocation numbers at its instants.
type annotMarks struct {
	name  string
	times []int64
	next  int
	marks []int
}

type liveRec struct {
	site  int32
	birth int
	size  uint64
	made  int
	addr  traces.Addr
}

// windowSize is how many allocations' sites are kept to test a period
// against: 1 MiB.
const windowSize = 1 << 18

// New returns a Detector under opts.
func New(opts Options) *Detector {
	if opts.MinIterations < 2 {
		opts.MinIterations = 3
	}
	d := &Detector{opts: opts, siteN: make(map[string]int32), live: make(map[int]liveRec), named: -1}
	by := map[string]*annotMarks{}
	for _, a := range opts.Annotations {
		name, _, _ := strings.Cut(a.Name, "#")
		m := by[name]
		if m == nil {
			m = &annotMarks{name: name}
			by[name] = m
			d.annots = append(d.annots, m)
		}
		m.times = append(m.times, a.T)
	}
	return d
}

// Event hears of each event before the model steps it.
func (d *Detector) Event(ev *traces.Event, _ traces.Pos) {
	if ev.T > 0 {
		d.now = ev.T
	}
}

// tracked reports whether things of kind k are a program's allocations:
// blocks, objects and pool blocks, not arena buffers (freed with their
// frame) or device segments (the allocator's).
func tracked(k model.ThingKind) bool {
	switch k.String() {
	case "device segment", "arena buffer":
		return false
	}
	return true
}

// Born hears of a thing made.
func (d *Detector) Born(t model.Thing) {
	if !tracked(t.Kind) {
		return
	}
	s := d.site(t.Site)
	b := d.births
	d.births++
	for _, m := range d.annots {
		for ; m.next < len(m.times) && m.times[m.next] <= d.now; m.next++ {
			if n := len(m.marks); n == 0 || m.marks[n-1] != b {
				m.marks = append(m.marks, b)
			}
		}
	}
	if len(d.window) < windowSize {
		d.window = append(d.window, s)
	}
	d.sites[s].add(b, s == d.named)
	d.live[t.ID] = liveRec{site: s, birth: b, size: t.Size, made: t.Made, addr: t.Addr}
}

// Died hears of a thing's death.
func (d *Detector) Died(t model.Thing, _ int) { delete(d.live, t.ID) }

func (d *Detector) site(name string) int32 {
	if i, ok := d.siteN[name]; ok {
		return i
	}
	i := int32(len(d.sites))
	d.siteN[name] = i
	d.sites = append(d.sites, siteStat{name: name})
	if d.named < 0 && d.opts.Iteration != "" && siteMatches(name, d.opts.Iteration) {
		d.named = i
	}
	return i
}

// siteMatches reports whether the site name is the one the user wrote:
// the whole of it, or its end after a '/'.
func siteMatches(name, want string) bool {
	if name == want {
		return true
	}
	n := len(name) - len(want)
	return n > 0 && name[n:] == want && name[n-1] == '/'
}

// ErrNoSuchSite is the error of an Options.Iteration no allocation has.
var ErrNoSuchSite = errors.New("no allocation is made at the iteration site")

// ErrNoSuchAnnotation is the error of an Options.IterationAnnotation that
// names none of Options.Annotations.
var ErrNoSuchAnnotation = errors.New("no annotation has that name")

// byAnnotation cuts the iterations at an annotation's instants.
func (d *Detector) byAnnotation(res *Result, m *annotMarks, named bool) *Result {
	res.Iteration = Iteration{Annotation: m.name, Named: named, Count: len(m.marks)}
	// The allocations an iteration makes, and how steady, as for a site.
	by := map[int]int{}
	for i := 1; i < len(m.marks); i++ {
		by[m.marks[i]-m.marks[i-1]]++
	}
	for g, c := range by {
		if c > by[res.Iteration.Allocations] || c == by[res.Iteration.Allocations] && g < res.Iteration.Allocations {
			res.Iteration.Allocations = g
		}
	}
	if len(m.marks) > 1 {
		res.Iteration.Steadiness = float64(by[res.Iteration.Allocations]) / float64(len(m.marks)-1)
	}
	if len(m.marks) < d.opts.MinIterations+1 {
		res.Iteration.Reason = fmt.Sprintf("%d iterations seen; %d complete ones are needed", len(m.marks), d.opts.MinIterations)
		return res
	}
	res.Suspects = d.suspects(m.marks)
	return res
}

// Result cuts the allocations into iterations and names the suspects.
func (d *Detector) Result() (*Result, error) {
	res := &Result{Suspects: []Suspect{}}
	if name := d.opts.IterationAnnotation; name != "" {
		want, _, _ := strings.Cut(name, "#")
		for _, m := range d.annots {
			if m.name == want {
				return d.byAnnotation(res, m, true), nil
			}
		}
		return nil, fmt.Errorf("iteration annotation %q: %w", name, ErrNoSuchAnnotation)
	}
	marker := d.named
	if d.opts.Iteration != "" {
		if marker < 0 {
			return nil, fmt.Errorf("iteration site %q: %w", d.opts.Iteration, ErrNoSuchSite)
		}
	} else {
		marker = d.detect()
	}
	if marker < 0 {
		var best *annotMarks
		for _, m := range d.annots {
			if best == nil || len(m.marks) > len(best.marks) {
				best = m
			}
		}
		if best != nil && len(best.marks) >= d.opts.MinIterations+1 {
			return d.byAnnotation(res, best, false), nil
		}
		res.Iteration.Reason = "no site is allocated at a steady period of 3 or more iterations: name the allocation that starts an iteration (--iteration SITE)"
		return res, nil
	}
	st := &d.sites[marker]
	gap, steady := st.modalGap()
	res.Iteration = Iteration{Site: st.name, Named: d.named >= 0, Count: st.count, Allocations: gap, Steadiness: steady}
	if st.count < d.opts.MinIterations+1 {
		res.Iteration.Reason = fmt.Sprintf("%d iterations seen; %d complete ones are needed", st.count, d.opts.MinIterations)
		return res, nil
	}
	res.Suspects = d.suspects(st.births())
	return res, nil
}
