package export

import (
	"bufio"
	"github.com/tlcheck/tlcheck/internal/plural"
	"strconv"
	"unicode/utf8"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// perfetto writes the Chrome trace-event format (JSON), which
// ui.perfetto.dev and chrome://tracing open: a "traceEvents" array, then
// the verdict as "otherData". It writes each event as it hears of it and
// keeps nothing, so a trace of any length exports in the memory of its
// live things.
//
// Layout: one process (pid 1) named after the trace. Each thing's life is
// an async slice ("b" at its making, "e" at its death, matched by id, the
// model's object number), named by its kind and site, so that the viewers
// group lives by where they were made; its category is its address space.
// The live bytes of each space are a counter track ("C"): the device's
// are named "device reserved bytes" (segments and mapped ranges), beside a
// track "device allocated bytes" (pool blocks), as PyTorch names them.
// Violations are
// instant events ("i") on a thread of their own (tid 1).
type perfetto struct {
	w     *bufio.Writer
	name  string
	buf   []byte
	first bool // no event written yet: no comma before the next
	// allocated is the bytes of the live pool blocks, the device's
	// allocated memory, a counter of its own.
	allocated uint64
}

// perfettoPid and the tids place the events. Async slices belong to the
// process, but chrome://tracing's importer files each under a thread too.
const (
	perfettoPid           = 1
	perfettoViolationsTid = 1
	perfettoLivesTid      = 2
)

func newPerfetto(w *bufio.Writer, name string) *perfetto {
	return &perfetto{w: w, name: name, first: true}
}

func (p *perfetto) begin(h traces.Header) error {
	p.w.WriteString(`{"traceEvents":[`)
	title := "tlcheck: " + p.name
	if h.Source != "" {
		title += " (" + h.Source + ")"
	}
	p.meta("process_name", 0, title)
	p.meta("thread_name", perfettoViolationsTid, "violations")
	p.meta("thread_name", perfettoLivesTid, "lives")
	return nil
}

// meta writes a metadata event naming the process or a thread.
func (p *perfetto) meta(what string, tid int, name string) {
	b := p.open("M", what, "")
	b = appendKey(b, "tid")
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"args":{"name":`...)
	b = appendJSONString(b, name)
	b = append(b, "}}"...)
	p.flush(b)
}

// open starts an event of phase ph with its name, category and pid.
func (p *perfetto) open(ph, name, cat string) []byte {
	b := p.buf[:0]
	if !p.first {
		b = append(b, ",\n"...)
	} else {
		b = append(b, '\n')
	}
	p.first = false
	b = append(b, `{"ph":"`...)
	b = append(b, ph...)
	b = append(b, `","name":`...)
	b = appendJSONString(b, name)
	if cat != "" {
		b = appendKey(b, "cat")
		b = appendJSONString(b, cat)
	}
	b = appendKey(b, "pid")
	b = strconv.AppendInt(b, perfettoPid, 10)
	return b
}

func (p *perfetto) flush(b []byte) {
	p.w.Write(b)
	p.buf = b[:0]
}

// lifeName is a life's slice name: its kind and, where known, its site.
func lifeName(l *model.Thing) string {
	n := l.Kind.String()
	if l.Struct {
		n = "struct"
	}
	if l.Site != "" {
		n += " " + l.Site
	}
	return n
}

// lifeEvent writes the "b" or "e" of l's slice at stamp at.
func (p *perfetto) lifeEvent(ph string, l *model.Thing, at stamp) []byte {
	b := p.open(ph, lifeName(l), l.Kind.Space().String())
	b = appendKey(b, "tid")
	b = strconv.AppendInt(b, perfettoLivesTid, 10)
	b = appendKey(b, "id")
	b = strconv.AppendInt(b, int64(l.ID), 10)
	b = appendTS(b, at)
	return b
}

func (p *perfetto) born(l *model.Thing, at stamp) {
	b := p.lifeEvent("b", l, at)
	b = append(b, `,"args":{"object":`...)
	b = strconv.AppendInt(b, int64(l.ID), 10)
	b = appendKey(b, "addr")
	b = appendJSONString(b, l.Addr.String())
	b = appendKey(b, "size")
	b = strconv.AppendUint(b, l.Size, 10)
	b = appendKey(b, "made_at_event")
	b = strconv.AppendInt(b, int64(l.Made), 10)
	if l.Site != "" {
		b = appendKey(b, "site")
		b = appendJSONString(b, l.Site)
	}
	if l.Tag != "" {
		b = appendKey(b, "kind")
		b = appendJSONString(b, l.Tag)
	}
	b = append(b, "}}"...)
	p.flush(b)
	if l.Kind == model.PoolBlock {
		p.allocated += l.Size
		p.counterNamed(at, "device allocated bytes", p.allocated)
	}
}

func (p *perfetto) died(l *model.Thing, at stamp) {
	if l.Kind == model.PoolBlock {
		defer func() {
			p.allocated -= l.Size
			p.counterNamed(at, "device allocated bytes", p.allocated)
		}()
	}
	b := p.lifeEvent("e", l, at)
	b = append(b, `,"args":{"ended_at_event":`...)
	b = strconv.AppendInt(b, int64(at.event), 10)
	b = append(b, "}}"...)
	p.flush(b)
}

func (p *perfetto) counter(at stamp, sp traces.Space, bytes uint64) {
	name := sp.String() + " live bytes"
	if sp == traces.SpaceDevice {
		name = "device reserved bytes"
	}
	p.counterNamed(at, name, bytes)
}

func (p *perfetto) counterNamed(at stamp, name string, bytes uint64) {
	b := p.open("C", name, "")
	b = appendTS(b, at)
	b = append(b, `,"args":{"bytes":`...)
	b = strconv.AppendUint(b, bytes, 10)
	b = append(b, "}}"...)
	p.flush(b)
}

func (p *perfetto) violation(v *traces.Violation, at stamp, _ bool, _ uint64) {
	b := p.open("i", string(v.Kind), "violation")
	b = appendKey(b, "tid")
	b = strconv.AppendInt(b, perfettoViolationsTid, 10)
	b = append(b, `,"s":"t"`...)
	b = appendTS(b, at)
	b = append(b, `,"args":{"kind":`...)
	b = appendJSONString(b, string(v.Kind))
	b = appendKey(b, "message")
	b = appendJSONString(b, v.Message)
	b = appendKey(b, "event")
	b = strconv.AppendInt(b, int64(v.Event), 10)
	b = appendKey(b, "addr")
	b = appendJSONString(b, v.Addr.String())
	if v.Object != 0 {
		b = appendKey(b, "object")
		b = strconv.AppendInt(b, int64(v.Object), 10)
	}
	if v.Site != "" {
		b = appendKey(b, "site")
		b = appendJSONString(b, v.Site)
	}
	if len(v.Related) > 0 { // the history, as the viewers' argument panes show lists
		b = appendKey(b, "history")
		for i, r := range v.Related {
			b = append(b, "[,"[min(i, 1)])
			b = appendJSONString(b, r.What+": "+eventAt(r.Event, r.Line, r.Site))
		}
		b = append(b, ']')
	}
	b = append(b, "}}"...)
	p.flush(b)
}

func (p *perfetto) unleaked(*model.Thing) {}

// finish ends the slices of things still live at the last event, so that
// the viewers draw them to the end, and writes the verdict.
func (p *perfetto) finish(sum *Summary, live []model.Thing, last stamp) error {
	for i := range live {
		b := p.lifeEvent("e", &live[i], last)
		b = append(b, `,"args":{"live_at_end":true}}`...)
		p.flush(b)
	}
	r := sum.Report
	b := append(p.buf[:0], "\n],\n"...)
	if last.hasT {
		// Times are the trace's own, in ns: show them so. Event numbers
		// keep the viewers' default unit.
		b = append(b, `"displayTimeUnit":"ns",`...)
	}
	b = append(b, `"otherData":{"trace":`...)
	b = appendJSONString(b, p.name)
	b = appendKey(b, "verdict")
	b = appendJSONString(b, verdict(sum))
	b = appendKey(b, "events")
	b = strconv.AppendInt(b, int64(r.Events), 10)
	b = appendKey(b, "violations")
	b = strconv.AppendInt(b, int64(sum.Violations), 10)
	b = appendKey(b, "leaked_objects")
	b = strconv.AppendInt(b, int64(r.Leaked.Objects), 10)
	b = appendKey(b, "leaked_bytes")
	b = strconv.AppendUint(b, r.Leaked.Bytes, 10)
	b = appendKey(b, "peak_live_bytes")
	b = strconv.AppendUint(b, r.PeakLiveBytes, 10)
	b = appendKey(b, "complete")
	b = strconv.AppendBool(b, r.Complete)
	b = appendKey(b, "time_unit")
	b = appendJSONString(b, timeUnit(last))
	b = append(b, "}}\n"...)
	p.flush(b)
	return nil
}

// timeUnit says what the timestamps are, for a reader of otherData.
func timeUnit(last stamp) string {
	if last.hasT {
		return "the events' t"
	}
	return "event numbers (1 event = 1 µs)"
}

// verdict is the one-line verdict the exports show: "clean", "2
// violations: 1 leak, 1 double-free", with a note where no leak check ran.
func verdict(sum *Summary) string {
	s := "clean: no violation"
	if sum.Violations > 0 {
		s = plural.Count(sum.Violations, "violation") + ":"
		sep := " "
		for _, k := range traces.Kinds() {
			if n := sum.ByKind[k]; n > 0 {
				s += sep + strconv.Itoa(n) + " " + string(k)
				sep = ", "
			}
		}
	}
	switch {
	case sum.Report.Complete:
	case sum.snapshot:
		// As the text report says it: what a snapshot holds is in use.
		s += " (a memory snapshot is taken mid-run: what it still holds is live, not leaked, so no leak check ran)"
	default:
		s += " (incomplete: the trace stops without an end event, so no leak check ran)"
	}
	return s
}

// appendTS appends the "ts" field in µs: the event's time (ns) where the
// trace has one, else its number.
func appendTS(b []byte, at stamp) []byte {
	b = appendKey(b, "ts")
	if !at.hasT {
		return strconv.AppendInt(b, int64(at.event), 10)
	}
	t := uint64(at.t)
	if at.t < 0 {
		b = append(b, '-')
		t = -t // a time before the origin: its magnitude, that of math.MinInt64 too
	}
	b = strconv.AppendUint(b, t/1000, 10)
	if ns := t % 1000; ns != 0 {
		b = append(b, '.')
		frac := strconv.AppendUint(nil, 1000+ns, 10)[1:] // three digits
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		b = append(b, frac...)
	}
	return b
}

func appendKey(b []byte, k string) []byte {
	b = append(b, ",\""...)
	b = append(b, k...)
	return append(b, "\":"...)
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, so that a site of raw bytes cannot make the file unreadable,
// and every control character (C0, DEL, C1) is escaped, so that none
// reaches a terminal that shows the file.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r < 0xa0: // a C1 control
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
