package torchsnap

// FuzzPickle and what it needs, in one file: ClusterFuzzLite builds a
// target's file alone with the package's non-test files
// (.clusterfuzzlite/build.sh).

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	ogorek "github.com/kisielk/og-rek"
)

// oracle is Python's own pickle module, in a process of its own that
// loads one pickle after another (testdata/pickle_oracle.py).
type oracle struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

var (
	oracleOnce sync.Once
	theOracle  *oracle
)

// pythonOracle starts the oracle, or returns nil where python3 is not at
// hand (or TLCHECK_NO_PYTHON is set, to hold the machine to og-rek).
func pythonOracle() *oracle {
	oracleOnce.Do(func() {
		if os.Getenv("TLCHECK_NO_PYTHON") != "" {
			return
		}
		o := &oracle{}
		if o.start() == nil {
			theOracle = o
		}
	})
	return theOracle
}

func (o *oracle) start() error {
	py, err := exec.LookPath("python3")
	if err != nil {
		return err
	}
	script, err := filepath.Abs(filepath.Join("testdata", "pickle_oracle.py"))
	if err != nil {
		return err
	}
	// A libFuzzer build runs in another folder, without testdata: no
	// oracle then, as without python3.
	if _, err := os.Stat(script); err != nil {
		return err
	}
	cmd := exec.Command(py, "-W", "ignore", script)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = nil // its warnings would fill a pipe no one reads
	if err := cmd.Start(); err != nil {
		return err
	}
	o.cmd, o.in, o.out = cmd, in, bufio.NewReaderSize(out, 1<<20)
	return nil
}

// load returns Python's verdict: "ok CANON", "ok-trailing CANON", "err
// TYPE" or "skip WHY". Python may take any time on a pickle (a dict key
// of tuples that share tuples, nested 60 deep, takes 2^60 steps to hash):
// after 5 s the process is killed, started again, and the input skipped.
func (o *oracle) load(t *testing.T, data []byte) string {
	return o.loadWithin(t, data, 5*time.Second)
}

// loadWithin is load with its own limit: generated corner cases, which
// hold no pickle bombs, are given long enough that a loaded machine does
// not turn a slow answer into a skip.
func (o *oracle) loadWithin(t *testing.T, data []byte, limit time.Duration) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(data)))
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	in, out := o.in, o.out
	go func() {
		if _, err := in.Write(append(n[:], data...)); err != nil {
			got <- answer{"", err}
			return
		}
		line, err := out.ReadString('\n')
		got <- answer{line, err}
	}()
	select {
	case a := <-got:
		if a.err != nil {
			t.Fatalf("oracle: %v", a.err)
		}
		return strings.TrimSuffix(a.line, "\n")
	case <-time.After(limit):
		o.cmd.Process.Kill()
		o.cmd.Wait()
		if err := o.start(); err != nil {
			t.Fatalf("oracle: starting again: %v", err)
		}
		return "skip timeout"
	}
}

// refusals are the reader's errors for pickles Python loads: forms
// Python's pickler never writes, and the reader's bounds (FORMAT.md of
// the package comment: "Untrusted input").
var refusals = []string{
	"of more than 40 digits", "is not a decimal", "not a decimal float", "is longer than",
	"would ", "PyTorch never", "after the pickle's STOP", "memoized", "values on the pickle's stack",
	"MARKs open", "never has", "SETITEM to a list", "SETITEMS to a list", "memo index",
	"values outside the places",
}

// diffPickle holds the machine to Python's pickle (where python3 is at
// hand) or to og-rek: it never accepts what Python refuses, refuses what
// Python accepts only for a reason in refusals, and reads what both
// accept as the same value.
func diffPickle(t *testing.T, data []byte) {
	v, err := decodeGeneric(data)
	var got string
	if err == nil {
		if got, err = canon(v); err != nil {
			return // too long, or NaN keys, to compare
		}
	} else if te := (*Error)(nil); !errors.As(err, &te) {
		t.Fatalf("error %q (%T) is not an *Error", err, err)
	}
	if o := pythonOracle(); o != nil {
		py := o.load(t, data)
		verdict, want, _ := strings.Cut(py, " ")
		switch {
		case verdict == "skip":
		case verdict == "err" && err == nil:
			t.Fatalf("read %.200s where Python's pickle refuses the input (%s)", got, want)
		case (verdict == "ok" || verdict == "ok-trailing") && err != nil:
			for _, r := range refusals {
				if strings.Contains(err.Error(), r) {
					return
				}
			}
			t.Fatalf("refused with %q what Python's pickle reads as %.200s", err, want)
		case verdict == "ok" && got != want:
			t.Fatalf("read\n%.500s\nwhere Python's pickle reads\n%.500s", got, want)
		}
		return
	}
	if err != nil || !ogrekReads(data) {
		return
	}
	ov, oerr := ogorek.NewDecoder(bytes.NewReader(relinkForOgrek(data))).Decode()
	if oerr != nil {
		return // og-rek's own limits
	}
	want, cerr := canonOgrek(ov)
	if cerr == nil && got != want && !strings.Contains(got, "<cycle>") {
		t.Fatalf("read\n%.500s\nwhere og-rek reads\n%.500s", got, want)
	}
}

// ogrekReads reports whether every opcode of data is one og-rek decodes
// as Python does (the table of the reader's first pass, genops_test.go).
func ogrekReads(data []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	for at := 0; at < len(data); {
		info, known := accepted[data[at]]
		if !known || info.name == "LONG1" && at+1 < len(data) && data[at+1] > 8 {
			return false
		}
		n, _, err := argLen(data, at+1, info)
		if err != nil {
			return false
		}
		if data[at] == '.' {
			return at+1 == len(data)
		}
		at += 1 + n
	}
	return false
}

// FuzzPickle holds the machine to Python's pickle (or, without python3,
// to og-rek), as diffPickle says, and the snapshot reader to failing only
// with an *Error. Its seeds are the test snapshots and testdata/fuzz.
func FuzzPickle(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pickle"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) <= 16<<10 {
			f.Add(data)
		}
	}
	for _, s := range pickleSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return // small inputs explore faster
		}
		diffPickle(t, data)
		if _, err := NewReaderLimits(bytes.NewReader(data), Limits{}); err != nil {
			if te := (*Error)(nil); !errors.As(err, &te) {
				t.Fatalf("snapshot reader: error %q (%T) is not an *Error", err, err)
			}
		}
	})
}

// pickleSeeds are small pickles of each opcode the machine runs.
var pickleSeeds = []string{
	"\x80\x04N.", "\x80\x04\x88.", "I01\n.", "I-12\n.", "L123L\n.", "F1.5\n.", "S'a\\x41\\n'\n.",
	"Vcaf\\u00e9\\U0001f600\n.", "\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00.",
	"\x80\x02\x8a\x02\xff\x7f.", "\x80\x04\x8b\x02\x00\x00\x00\x01\x02.", "\x80\x04G?\xf8\x00\x00\x00\x00\x00\x00.",
	"\x80\x04X\x03\x00\x00\x00abc.", "\x80\x04\x8c\x03\xed\xa0\x80.", "\x80\x04C\x02ab.", "\x80\x04B\x01\x00\x00\x00a.",
	"\x80\x04U\x02ab.", "\x80\x04T\x01\x00\x00\x00a.", "\x80\x04(K\x01K\x02t.", "\x80\x04K\x01K\x02\x86.",
	"\x80\x04}\x94(K\x01K\x02G?\xf0\x00\x00\x00\x00\x00\x00K\x03u.", "\x80\x04]\x94(K\x01h\x00e.",
	"(lp0\nI1\naI2\na.", "(dp0\nVa\np1\nI1\ns.", "\x80\x04](K\x01\x94\x94K\x02h\x01e.", "\x80\x04N(0.",
	"\x80\x04(K\x011.", "\x80\x04K\x012\x86.", "\x80\x04\x95\x03\x00\x00\x00\x00\x00\x00\x00K\x01.",
	"\x80\x04]r\x00\x00\x01\x00j\x00\x00\x01\x00a.", "\x80\x04}K\x01]s.", "\x80\x04)\x94.",
	"\x80\x04J\xff\xff\xff\xff.", "V\xe9\\\\u00e9\\u00e9\n.",
}

// The differential test over the seeds alone runs with every go test.
func TestPickleSeeds(t *testing.T) {
	for _, s := range pickleSeeds {
		diffPickle(t, []byte(s))
	}
}

// TestPickleMutants runs the differential test over mutants of the seeds
// and the test snapshots (bytes changed, dropped, repeated), drawn from a
// fixed seed: where go test -fuzz is not run, it still meets inputs that
// no one wrote by hand.
func TestPickleMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("a few thousand pickles")
	}
	var seeds [][]byte
	for _, s := range pickleSeeds {
		seeds = append(seeds, []byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pickle"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil && len(data) <= 16<<10 {
			seeds = append(seeds, data)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		d := slices.Clone(seeds[rng.IntN(len(seeds))])
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(d))
			switch rng.IntN(4) {
			case 0:
				d[at] = byte(rng.IntN(256))
			case 1:
				d = slices.Delete(d, at, min(len(d), at+1+rng.IntN(8)))
			case 2:
				end := min(len(d), at+1+rng.IntN(16))
				d = slices.Insert(d, at, d[at:end]...)
			case 3:
				const ops = "()]}.aeust\x94\x85\x86\x87hq2012"
				d[at] = ops[rng.IntN(len(ops))]
			}
			if len(d) == 0 {
				d = []byte{'.'}
			}
		}
		diffPickle(t, d)
	}
}

// decodeGeneric runs the machine with no snapshot shape: every container
// holds its items, as Python's unpickler builds them.
func decodeGeneric(data []byte) (val, error) {
	m := &machine{
		in:  bufio.NewReader(bytes.NewReader(data)),
		lim: limits{maxString: defaultMaxString, maxStack: defaultMaxStack, maxHeld: 1 << 22, generic: true},
	}
	return m.run()
}

// errTooLong is a value whose canonical form would be too long to compare.
var errTooLong = errors.New("too long")

const canonLimit = 1 << 20

// canon writes the canonical form of a value the machine decoded, as
// testdata/pickle_oracle.py writes Python's.
func canon(v val) (string, error) {
	c := canoner{busy: make(map[*obj]bool)}
	s := c.val(v)
	return s, c.err
}

type canoner struct {
	busy map[*obj]bool
	size int
	err  error
}

func (c *canoner) val(v val) string {
	c.size++
	if c.size > canonLimit {
		c.err = errTooLong
		return ""
	}
	switch v.k {
	case kNone:
		return "N"
	case kBool:
		return map[bool]string{true: "T", false: "F"}[v.i != 0]
	case kInt:
		return "i" + strconv.FormatInt(v.i, 16)
	case kUint:
		return "i" + strconv.FormatUint(uint64(v.i), 16)
	case kBig:
		return "i" + (*big.Int)(v.p).Text(16)
	case kFloat:
		f := math.Float64frombits(uint64(v.i))
		if math.IsNaN(f) {
			return "fnan"
		}
		return fmt.Sprintf("f%016x", uint64(v.i))
	case kStr:
		c.size += 2 * int(v.i)
		return "s" + hex.EncodeToString([]byte(v.str()))
	case kBytes:
		c.size += 2 * int(v.i)
		return "b" + hex.EncodeToString(unsafe.Slice((*byte)(v.p), v.i))
	case kObj:
		o := v.obj()
		if c.busy[o] {
			return "<cycle>"
		}
		c.busy[o] = true
		defer delete(c.busy, o)
		switch o.kind {
		case 'l', 't':
			parts := make([]string, len(o.items()))
			for i, it := range o.items() {
				parts[i] = c.val(it)
			}
			open, end := "[", "]"
			if o.kind == 't' {
				open, end = "(", ")"
			}
			return open + strings.Join(parts, ",") + end
		case 'd':
			byKey := map[string]string{}
			items := o.items()
			for i := 0; i < len(items); i += 2 {
				k := c.key(items[i])
				if strings.Contains(k, "fnan") {
					c.err = errors.New("a NaN key")
				}
				byKey[k] = c.val(items[i+1])
			}
			var parts []string
			for k, x := range byKey {
				parts = append(parts, k+":"+x)
			}
			slices.Sort(parts)
			return "{" + strings.Join(parts, ",") + "}"
		}
	}
	c.err = fmt.Errorf("no canonical form for kind %d", v.k)
	return ""
}

// key is a dict key's canonical form: numbers by value, as Python holds
// 1, 1.0 and True to be one key.
func (c *canoner) key(v val) string {
	c.size++
	if c.size > canonLimit {
		c.err = errTooLong
		return ""
	}
	switch v.k {
	case kBool:
		return "i" + strconv.FormatInt(v.i, 16)
	case kFloat:
		f := math.Float64frombits(uint64(v.i))
		if !math.IsInf(f, 0) && !math.IsNaN(f) && f == math.Trunc(f) {
			z, _ := new(big.Float).SetFloat64(f).Int(nil)
			return "i" + z.Text(16)
		}
	case kObj:
		if o := v.obj(); o.kind == 't' {
			parts := make([]string, len(o.items()))
			for i, it := range o.items() {
				parts[i] = c.key(it)
			}
			return "(" + strings.Join(parts, ",") + ")"
		}
	}
	return c.val(v)
}

// canonOgrek writes the canonical form of what og-rek decoded.
func canonOgrek(v any) (string, error) {
	switch x := v.(type) {
	case ogorek.None:
		return "N", nil
	case bool:
		return map[bool]string{true: "T", false: "F"}[x], nil
	case int64:
		return "i" + strconv.FormatInt(x, 16), nil
	case *big.Int:
		return "i" + x.Text(16), nil
	case float64:
		if math.IsNaN(x) {
			return "fnan", nil
		}
		return fmt.Sprintf("f%016x", math.Float64bits(x)), nil
	case string:
		return "s" + hex.EncodeToString([]byte(x)), nil
	case ogorek.Bytes:
		return "b" + hex.EncodeToString([]byte(x)), nil
	case []any, ogorek.Tuple:
		items, open, end := []any(nil), "[", "]"
		if t, ok := x.(ogorek.Tuple); ok {
			items, open, end = []any(t), "(", ")"
		} else {
			items = x.([]any)
		}
		parts := make([]string, len(items))
		for i, it := range items {
			s, err := canonOgrek(it)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return open + strings.Join(parts, ",") + end, nil
	case map[any]any:
		var parts []string
		keys := map[string]bool{}
		for k, it := range x {
			ks, err := canonOgrek(k)
			if err != nil {
				return "", err
			}
			// og-rek keeps 1 and 1.0 as two keys, which Python holds to
			// be one: such a dict has no value to compare.
			if f, ok := k.(float64); ok && f == math.Trunc(f) && !math.IsInf(f, 0) {
				z, _ := new(big.Float).SetFloat64(f).Int(nil)
				ks = "i" + z.Text(16)
			} else if b, ok := k.(bool); ok {
				ks = map[bool]string{true: "i1", false: "i0"}[b]
			}
			if keys[ks] {
				return "", errors.New("keys Python holds equal")
			}
			keys[ks] = true
			s, err := canonOgrek(it)
			if err != nil {
				return "", err
			}
			parts = append(parts, ks+":"+s)
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ",") + "}", nil
	}
	return "", fmt.Errorf("og-rek value of type %T", v)
}

func (o *obj) items() []val {
	if o.x == nil {
		return nil
	}
	return o.x.items
}

// genops walks a pickle's opcodes as Python's pickletools.genops does,
// without building a value: the tests use it to look at what the Writer
// writes and to hold og-rek to the machine (relinkForOgrek). It was the
// reader's first pass when the reader decoded with og-rek.

// argument kinds of the opcodes the scan accepts.
const (
	argNone  = iota
	argU1    // one byte
	argU2    // two bytes
	argU4    // four bytes
	argU8    // eight bytes (FRAME's length)
	argLine  // text up to a newline (protocol 0)
	argLen1  // a one-byte length, then that many bytes
	argLen4  // a four-byte length, then that many bytes
	argLen8  // an eight-byte length, then that many bytes
	argFloat // eight bytes, big-endian
)

// opInfo describes an opcode the scan accepts.
type opInfo struct {
	name string
	arg  int
	push bool // it pushes a value
	memo bool // it stores into the memo
}

// accepted are the opcodes Python's pickle writes for what a snapshot
// holds: dicts, lists, tuples, strings, bytes, integers, floats, booleans
// and None, in protocols 0 to 5.
var accepted = map[byte]opInfo{
	0x80: {"PROTO", argU1, false, false},
	0x95: {"FRAME", argU8, false, false},
	'.':  {"STOP", argNone, false, false},
	'(':  {"MARK", argNone, true, false},
	'0':  {"POP", argNone, false, false},
	'2':  {"DUP", argNone, true, false},
	'}':  {"EMPTY_DICT", argNone, true, false},
	']':  {"EMPTY_LIST", argNone, true, false},
	')':  {"EMPTY_TUPLE", argNone, true, false},
	'd':  {"DICT", argNone, true, false},
	'l':  {"LIST", argNone, true, false},
	't':  {"TUPLE", argNone, true, false},
	0x85: {"TUPLE1", argNone, true, false},
	0x86: {"TUPLE2", argNone, true, false},
	0x87: {"TUPLE3", argNone, true, false},
	'a':  {"APPEND", argNone, false, false},
	'e':  {"APPENDS", argNone, false, false},
	's':  {"SETITEM", argNone, false, false},
	'u':  {"SETITEMS", argNone, false, false},
	0x94: {"MEMOIZE", argNone, false, true},
	'p':  {"PUT", argLine, false, true},
	'q':  {"BINPUT", argU1, false, true},
	'r':  {"LONG_BINPUT", argU4, false, true},
	'g':  {"GET", argLine, true, false},
	'h':  {"BINGET", argU1, true, false},
	'j':  {"LONG_BINGET", argU4, true, false},
	'N':  {"NONE", argNone, true, false},
	0x88: {"NEWTRUE", argNone, true, false},
	0x89: {"NEWFALSE", argNone, true, false},
	'I':  {"INT", argLine, true, false},
	'J':  {"BININT", argU4, true, false},
	'K':  {"BININT1", argU1, true, false},
	'M':  {"BININT2", argU2, true, false},
	'L':  {"LONG", argLine, true, false},
	0x8a: {"LONG1", argLen1, true, false},
	'F':  {"FLOAT", argLine, true, false},
	'G':  {"BINFLOAT", argFloat, true, false},
	'S':  {"STRING", argLine, true, false},
	'T':  {"BINSTRING", argLen4, true, false},
	'U':  {"SHORT_BINSTRING", argLen1, true, false},
	'V':  {"UNICODE", argLine, true, false},
	'X':  {"BINUNICODE", argLen4, true, false},
	0x8c: {"SHORT_BINUNICODE", argLen1, true, false},
	'B':  {"BINBYTES", argLen4, true, false},
	'C':  {"SHORT_BINBYTES", argLen1, true, false},
}

// argLen returns how many bytes the argument of an opcode at p[at:] takes
// and how long its payload is, holding lengths to what remains.
func argLen(p []byte, at int, info opInfo) (n, payload int, err error) {
	rest := len(p) - at
	need := func(k int) error {
		if rest < k {
			return errTruncated(fmt.Sprintf("its argument needs %d bytes, %d remain", k, rest))
		}
		return nil
	}
	switch info.arg {
	case argNone:
		return 0, 0, nil
	case argU1, argFloat, argU2, argU4, argU8:
		k := map[int]int{argU1: 1, argU2: 2, argU4: 4, argU8: 8, argFloat: 8}[info.arg]
		if err := need(k); err != nil {
			return 0, 0, err
		}
		if info.arg == argU8 { // FRAME: the frame must lie within the input
			if l := binary.LittleEndian.Uint64(p[at:]); l > uint64(rest-8) {
				return 0, 0, errTruncated(fmt.Sprintf("it declares a frame of %d bytes, %d remain", l, rest-8))
			}
		}
		return k, 0, nil
	case argLine:
		for i := at; i < len(p); i++ {
			if p[i] == '\n' {
				return i - at + 1, i - at, nil
			}
		}
		return 0, 0, errTruncated("its argument has no ending newline")
	case argLen1, argLen4, argLen8:
		k := map[int]int{argLen1: 1, argLen4: 4, argLen8: 8}[info.arg]
		if err := need(k); err != nil {
			return 0, 0, err
		}
		var l uint64
		switch k {
		case 1:
			l = uint64(p[at])
		case 4:
			l = uint64(binary.LittleEndian.Uint32(p[at:]))
		default:
			l = binary.LittleEndian.Uint64(p[at:])
		}
		if l > uint64(rest-k) {
			return 0, 0, errTruncated(fmt.Sprintf("it declares %d bytes, %d remain", l, rest-k))
		}
		return k + int(l), int(l), nil
	}
	return 0, 0, fmt.Errorf("unhandled argument kind %d", info.arg)
}

// truncatedError marks an input that ends too soon.
type truncatedError struct{ msg string }

func (e *truncatedError) Error() string { return "truncated: " + e.msg }

func errTruncated(msg string) error { return &truncatedError{msg} }

// og-rek decodes a list as a Go slice, and stores in its memo the slice as
// it is when the memo is written. Python's pickle memoizes a list as soon
// as it is made, empty, and appends its items after: so every later
// reference to the list (BINGET) decodes as the empty list. PyTorch's
// snapshots share one frames list among all the entries with the same
// stack, so most entries would lose their frames. relink rewrites the
// pickle so that og-rek's memo holds each list whole: after every APPEND
// or APPENDS to a memoized list it writes the list's memo entry again.
// MEMOIZE, whose index og-rek takes from the memo's size, becomes an
// explicit LONG_BINPUT, so that moved entries cannot shift the others;
// FRAME, which only helps reading ahead, is dropped, since the frames'
// lengths change.
//
// It simulates the stack only as far as it needs: which slots hold lists,
// and under which memo key. A list referred to from inside itself (a
// cycle) still decodes as it was at that point; snapshots hold none.
// relinkForOgrek is called on pickles that the machine accepted.
func relinkForOgrek(p []byte) []byte {
	type slot struct {
		mark bool
		list bool
		put  []byte // the put that writes this list's memo entry; nil if none
	}
	var (
		out   = make([]byte, 0, len(p)+len(p)/4)
		stack []slot
		keys  = make(map[string]struct{})
	)
	pop := func(n int) {
		stack = stack[:max(0, len(stack)-n)]
	}
	popMark := func() {
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.mark {
				return
			}
		}
	}
	push := func(s slot) { stack = append(stack, s) }
	reput := func() {
		if len(stack) > 0 && stack[len(stack)-1].put != nil {
			out = append(out, stack[len(stack)-1].put...)
		}
	}
	for at := 0; at < len(p); {
		op := p[at]
		info := accepted[op]
		n, payload, _ := argLen(p, at+1, info)
		arg := p[at+1 : at+1+n]
		raw := p[at : at+1+n]
		at += 1 + n
		switch op {
		case 0x95: // FRAME
			continue
		case 0x94, 'q', 'r', 'p': // MEMOIZE, BINPUT, LONG_BINPUT, PUT
			var key string
			put := raw
			switch op {
			case 0x94:
				idx := len(keys)
				key = strconv.Itoa(idx)
				put = binary.LittleEndian.AppendUint32([]byte{'r'}, uint32(idx))
			case 'q':
				key = strconv.Itoa(int(arg[0]))
			case 'r':
				key = strconv.Itoa(int(binary.LittleEndian.Uint32(arg)))
			case 'p':
				key = string(arg[:payload])
			}
			keys[key] = struct{}{}
			out = append(out, put...)
			if len(stack) > 0 && stack[len(stack)-1].list {
				stack[len(stack)-1].put = put
			}
			continue
		}
		out = append(out, raw...)
		switch op {
		case '(':
			push(slot{mark: true})
		case ']':
			push(slot{list: true})
		case 'l':
			popMark()
			push(slot{list: true})
		case 'd', 't':
			popMark()
			push(slot{})
		case 'e': // APPENDS
			popMark()
			reput()
		case 'a': // APPEND
			pop(1)
			reput()
		case 'u':
			popMark()
		case 's':
			pop(2)
		case '0', '.':
			pop(1)
		case 0x85:
			pop(1)
			push(slot{})
		case 0x86:
			pop(2)
			push(slot{})
		case 0x87:
			pop(3)
			push(slot{})
		case 0x80:
		default:
			if info.push {
				push(slot{}) // a value, or a memo reference (whose list is whole by now)
			}
		}
	}
	return out
}
