package torchsnap_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	ogorek "github.com/kisielk/og-rek"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// The snapshot reader at its bounds and over every block state: pins that
// need no Python, and generated snapshots, pickled by Go in each string
// opcode and by Python's own pickler in each protocol.

// pyPickler is Python's pickle.dumps, in a process of its own: each JSON
// value in, its pickle of the given protocol out.
const pyPickler = `
import json, pickle, sys
out = sys.stdout.buffer
for line in sys.stdin:
    d = json.loads(line)
    b = pickle.dumps(d["v"], protocol=d["p"])
    out.write(len(b).to_bytes(4, "little") + b)
out.flush()
`

// pyJob is a value for Python to pickle in protocol P.
type pyJob struct {
	P int `json:"p"`
	V any `json:"v"`
}

// pyPickles pickles each job with Python's pickle, or skips the test
// where python3 is not at hand (or TLCHECK_NO_PYTHON is set).
func pyPickles(t *testing.T, jobs []pyJob) [][]byte {
	t.Helper()
	py := python3()
	if py == "" {
		t.Skip("no python3 (or TLCHECK_NO_PYTHON is set): these snapshots are pickled by Python's own pickle")
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, j := range jobs {
		if err := enc.Encode(j); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, "-c", pyPickler)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.Bytes())
	}
	r := bufio.NewReader(bytes.NewReader(out))
	pickles := make([][]byte, len(jobs))
	for i := range pickles {
		var n uint32
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			t.Fatalf("python3 wrote %d pickles of %d", i, len(jobs))
		}
		pickles[i] = make([]byte, n)
		if _, err := io.ReadFull(r, pickles[i]); err != nil {
			t.Fatal(err)
		}
	}
	return pickles
}

// python3 is the path of python3, or "" where it is not at hand or
// TLCHECK_NO_PYTHON is set.
func python3() string {
	py, err := exec.LookPath("python3")
	if err != nil || os.Getenv("TLCHECK_NO_PYTHON") != "" {
		return ""
	}
	return py
}

// readEvents reads a snapshot within lim, with its events and stats.
func readEvents(data []byte, lim torchsnap.Limits) ([]traces.Event, torchsnap.Stats, error) {
	r, err := torchsnap.NewReaderLimits(bytes.NewReader(data), lim)
	if err != nil {
		return nil, torchsnap.Stats{}, err
	}
	var evs []traces.Event
	var ev traces.Event
	for r.Next(&ev) == nil {
		evs = append(evs, ev)
	}
	return evs, r.Stats(), nil
}

// TestPendingFreeBlock: a block freed on one stream and waiting on
// another's event (active_pending_free) is live at the snapshot: one
// segment with a 512-byte pending-free block and a 512-byte inactive one
// gives one live block.
func TestPendingFreeBlock(t *testing.T) {
	block := func(state string) map[any]any { return map[any]any{"size": int64(512), "state": state} }
	p := pickled(t, map[any]any{
		"segments": []any{map[any]any{"address": int64(0x1000), "total_size": int64(1024),
			"blocks": []any{block("active_pending_free"), block("inactive")}}},
		"device_traces": []any{[]any{}},
	})
	evs, stats, err := readEvents(p, torchsnap.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.LiveBlocks != 1 || stats.LiveSegments != 1 {
		t.Errorf("%d live blocks in %d segments, want 1 in 1", stats.LiveBlocks, stats.LiveSegments)
	}
	want := []traces.Event{
		{Op: traces.OpDevMalloc, Addr: 0x1000, Size: 1024, HasSize: true},
		{Op: traces.OpPoolGet, Addr: 0x1000, Size: 512, HasSize: true},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// siteEntry is a snapshot of one alloc whose one frame's filename is
// written by file (a whole string opcode), at line 7.
func siteEntry(file string) string {
	fr := pdict(pstr("filename"), file, pstr("line"), "K\x07", pstr("name"), pstr("f"))
	return psnap(pdict(pstr("action"), pstr("alloc"), pstr("addr"), "K\x10", pstr("size"), "K\x08", pstr("frames"), plist(fr)))
}

// TestMaxStringExactly: a string of exactly MaxString bytes is read; one
// byte more is not held, and in a field tlcheck reads is an error.
func TestMaxStringExactly(t *testing.T) {
	for _, max := range []int{100, 300} {
		for _, n := range []int{max, max + 1} {
			name := strings.Repeat("a", n-3) + ".py"
			evs, _, err := readEvents([]byte(siteEntry(pstr(name))), torchsnap.Limits{MaxString: max})
			switch {
			case n > max:
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("filename: a string of %d bytes, over the limit", n)) {
					t.Errorf("MaxString %d, a filename of %d bytes: error %v", max, n, err)
				}
			case err != nil:
				t.Errorf("MaxString %d, a filename of %d bytes: %v", max, n, err)
			case len(evs) != 1 || evs[0].Site != name+":7":
				t.Errorf("MaxString %d, a filename of %d bytes: events %v", max, n, evs)
			}
		}
	}
}

// stringOpcodes write a str of ASCII letters with each opcode that
// Python's unpickler reads as a str (nil where the opcode cannot hold n
// bytes).
var stringOpcodes = []struct {
	name  string
	write func(s string) string
}{
	{"SHORT_BINUNICODE", func(s string) string { return ifShort(s, "\x8c") }},
	{"BINUNICODE", func(s string) string { return "X" + le(len(s), 4) + s }},
	{"BINUNICODE8", func(s string) string { return "\x8d" + le(len(s), 8) + s }},
	{"SHORT_BINSTRING", func(s string) string { return ifShort(s, "U") }},
	{"BINSTRING", func(s string) string { return "T" + le(len(s), 4) + s }},
	{"UNICODE", func(s string) string { return "V" + s + "\n" }},
	{"STRING", func(s string) string { return "S'" + s + "'\n" }},
}

func ifShort(s, op string) string {
	if len(s) > 255 {
		return ""
	}
	return op + string([]byte{byte(len(s))}) + s
}

func le(n, size int) string {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(n >> (8 * i))
	}
	return string(b)
}

// maxLine is the reader's bound on a protocol-0 text (FORMAT.md,
// "Limits").
const maxLine = 1 << 20

// stringLimits are MaxString values to read at: small (but above the
// longest key the reader looks for, "device_traces"), around a short
// string's 255 bytes, the default (0), and around the reader's 1 MiB
// buffer, which longer strings are read past in pieces (not with -short).
var stringLimits = []int{32, 100, 255, 256, 4096, 0, 1 << 20, 2 << 20}

// wantFilename checks what reading a filename of n bytes within max
// gave, where the pickle's text for it is text bytes long (protocol 0)
// or 0.
func wantFilename(evs []traces.Event, err error, name string, max, text int) error {
	n := len(name)
	switch {
	case text > maxLine:
		if err == nil || !strings.Contains(err.Error(), "is longer than") {
			return fmt.Errorf("error %v, want one that the text is too long", err)
		}
	case n > max:
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("filename: a string of %d bytes, over the limit", n)) {
			return fmt.Errorf("error %v, want one that the filename is over the limit", err)
		}
	case err != nil:
		return err
	case len(evs) != 1 || evs[0].Site != name+":7":
		return fmt.Errorf("%d events, the first at site of %d bytes; want 1 at %d", len(evs), len(evs[0].Site), n+2)
	}
	return nil
}

// TestMaxStringOpcodes reads a filename of MaxString-1, MaxString and
// MaxString+1 bytes, for each MaxString of stringLimits, written with
// every string opcode: each is read, or is over the limit, alike.
func TestMaxStringOpcodes(t *testing.T) {
	for _, max := range stringLimits {
		if max >= 1<<20 && testing.Short() {
			continue
		}
		lim := torchsnap.Limits{MaxString: max}
		if max == 0 {
			max = 64 << 10 // the default
		}
		for _, n := range []int{max - 1, max, max + 1} {
			name := strings.Repeat("a", n-3) + ".py"
			for _, op := range stringOpcodes {
				arg := op.write(name)
				if arg == "" {
					continue
				}
				text := 0
				if op.name == "UNICODE" || op.name == "STRING" {
					text = len(arg) - 2
				}
				evs, _, err := readEvents([]byte(siteEntry(arg)), lim)
				if err := wantFilename(evs, err, name, max, text); err != nil {
					t.Errorf("MaxString %d, a filename of %d bytes as %s: %v", max, n, op.name, err)
				}
			}
		}
	}
}

// TestMaxStringProtocols reads the same filenames in snapshots that
// Python's own pickler wrote, in each protocol from 0 to 5 (for limits
// of megabytes, in protocol 0, text, and 4, binary).
func TestMaxStringProtocols(t *testing.T) {
	type job struct{ max, n, p int }
	var jobs []job
	var pj []pyJob
	for _, max := range stringLimits {
		if max >= 1<<20 && testing.Short() {
			continue
		}
		if max == 0 {
			max = 64 << 10
		}
		for _, n := range []int{max - 1, max, max + 1} {
			for p := range 6 {
				if max >= 1<<20 && p != 0 && p != 4 {
					continue // strings of megabytes: the two ways to write them suffice
				}
				jobs = append(jobs, job{max, n, p})
				pj = append(pj, pyJob{p, siteSnapshot(strings.Repeat("a", n-3) + ".py")})
			}
		}
	}
	for i, data := range pyPickles(t, pj) {
		j := jobs[i]
		name := strings.Repeat("a", j.n-3) + ".py"
		text := 0
		if j.p == 0 {
			text = j.n // UNICODE, raw-unicode-escape: letters as they are
		}
		evs, _, err := readEvents(data, torchsnap.Limits{MaxString: j.max})
		if err := wantFilename(evs, err, name, j.max, text); err != nil {
			t.Errorf("MaxString %d, a filename of %d bytes, protocol %d: %v", j.max, j.n, j.p, err)
		}
	}
}

// siteSnapshot is siteEntry's snapshot as a value for Python to pickle.
func siteSnapshot(file string) any {
	frame := map[string]any{"filename": file, "line": 7, "name": "f"}
	entry := map[string]any{"action": "alloc", "addr": 16, "size": 8, "frames": []any{frame}}
	return map[string]any{"segments": []any{}, "device_traces": []any{[]any{entry}}}
}

// blockStates are the states PyTorch writes, and some it does not.
var (
	liveStates  = []string{"active_allocated", "active_pending_free"}
	otherStates = []string{"", "active", "Active_allocated", "pending_free", "inactive ", "free"}
)

// TestBlockStatesGenerated reads snapshots of random segments whose
// blocks are in every state (PyTorch's and others), with and without
// their addresses, at addresses up to the top of 64 bits, pickled by
// Python in each protocol (by og-rek where there is no Python): a block is live where its state is active, an
// unknown state is an error naming its place, and what is live becomes
// the events that rebuild it.
func TestBlockStatesGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 13))
	type want struct {
		evs   []traces.Event
		stats torchsnap.Stats
		err   string
	}
	var (
		jobs  []pyJob
		wants []want
	)
	for i := range 120 {
		var segs []any
		var w want
		var segEvs, blockEvs []traces.Event
		withAddr := rng.IntN(2) == 0
		bases := []uint64{0x7f0000000000, 1<<63 - 1<<20, 1 << 63, 1<<64 - 1<<20}
		for s := range 1 + rng.IntN(3) {
			base := bases[s] + uint64(rng.IntN(16))<<12
			var blocks []any
			at := base
			// A segment without frames takes the site of its largest live
			// block (the first of the largest, in address order).
			var segSite string
			var segBest uint64
			for b := range 1 + rng.IntN(4) {
				size := uint64(512 * (1 + rng.IntN(4)))
				var state string
				switch r := rng.IntN(10); {
				case r < 4:
					state = liveStates[rng.IntN(len(liveStates))]
				case r < 9 || w.err != "":
					state = "inactive"
				default:
					state = otherStates[rng.IntN(len(otherStates))]
					w.err = fmt.Sprintf("segments[%d].blocks[%d].state: unknown block state %q", s, b, state)
				}
				site := fmt.Sprintf("m.py:%d", 100*s+b+1)
				blk := map[string]any{"size": size, "state": state, "requested_size": size,
					"frames": []any{map[string]any{"filename": "m.py", "line": 100*s + b + 1, "name": "f"}}}
				if withAddr {
					blk["address"] = at
				}
				blocks = append(blocks, blk)
				if slices.Contains(liveStates, state) {
					blockEvs = append(blockEvs, traces.Event{Op: traces.OpPoolGet, Addr: traces.Addr(at), Size: size, HasSize: true, Site: site})
					w.stats.LiveBlocks++
					if size > segBest {
						segSite, segBest = site, size
					}
				}
				at += size
			}
			total := at - base
			segs = append(segs, map[string]any{"device": 0, "address": base, "total_size": total, "stream": 0,
				"segment_type": "large", "blocks": blocks, "frames": []any{}})
			segEvs = append(segEvs, traces.Event{Op: traces.OpDevMalloc, Addr: traces.Addr(base), Size: total, HasSize: true, Site: segSite})
			w.stats.LiveSegments++
		}
		w.evs = append(segEvs, blockEvs...)
		w.stats.Prelude = len(w.evs)
		jobs = append(jobs, pyJob{i % 6, map[string]any{"segments": segs, "device_traces": []any{[]any{}}}})
		wants = append(wants, w)
	}
	var pickles [][]byte
	if python3() != "" {
		pickles = pyPickles(t, jobs)
	} else {
		// Without Python, og-rek's pickler (protocols 0 to 4) writes them.
		t.Log("no python3: the snapshots are pickled by og-rek")
		for _, j := range jobs {
			var b bytes.Buffer
			if err := ogorek.NewEncoderWithConfig(&b, &ogorek.EncoderConfig{Protocol: min(j.P, 4)}).Encode(j.V); err != nil {
				t.Fatal(err)
			}
			pickles = append(pickles, b.Bytes())
		}
	}
	for i, data := range pickles {
		w := wants[i]
		evs, stats, err := readEvents(data, torchsnap.Limits{})
		switch {
		case w.err != "":
			if err == nil || !strings.Contains(err.Error(), w.err) {
				t.Errorf("snapshot %d (protocol %d): error %v, want %q", i, jobs[i].P, err, w.err)
			}
		case err != nil:
			t.Errorf("snapshot %d (protocol %d): %v", i, jobs[i].P, err)
		default:
			if diff := cmp.Diff(w.evs, evs); diff != "" {
				t.Errorf("snapshot %d (protocol %d): events (-want +got):\n%s", i, jobs[i].P, diff)
			}
			if stats != w.stats {
				t.Errorf("snapshot %d (protocol %d): stats %+v, want %+v", i, jobs[i].P, stats, w.stats)
			}
		}
	}
}
