package torchsnap

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
func (o *oracle) load(tb testing.TB, data []byte) string {
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
			tb.Fatalf("oracle: %v", a.err)
		}
		return strings.TrimSuffix(a.line, "\n")
	case <-time.After(5 * time.Second):
		o.cmd.Process.Kill()
		o.cmd.Wait()
		if err := o.start(); err != nil {
			tb.Fatalf("oracle: starting again: %v", err)
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
