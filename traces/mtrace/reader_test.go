package mtrace

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tlcheck/tlcheck/traces"
)

// got is what a test compares of one yielded event.
type got struct {
	Op   traces.Op
	Addr traces.Addr
	Size uint64
	Site string
	Line int
}

// readAll reads every event of log, stopping at the first error.
func readAll(log string) ([]got, error) {
	r := NewReader(strings.NewReader(log))
	var evs []got
	for n := 0; ; n++ {
		var ev traces.Event
		err := r.Next(&ev)
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		if r.Pos().Event != n {
			return evs, errors.New("events not numbered in order")
		}
		evs = append(evs, got{ev.Op, ev.Addr, ev.Size, ev.Site, r.Pos().Line})
	}
}

func TestReaderEvents(t *testing.T) {
	end := got{Op: traces.OpEnd}
	tests := []struct {
		name string
		log  string
		want []got
	}{
		{"start only", "= Start\n", []got{end}},
		{"start after blank lines", "\n \n= Start\n", []got{end}},
		{
			name: "malloc and free with callers",
			log: "= Start\n" +
				"@ ./prog:(main+0x1d)[0x401136] + 0x4052a0 0x20\n" +
				"@ ./prog:[0x401153] - 0x4052a0\n",
			want: []got{
				{traces.OpMalloc, 0x4052a0, 0x20, "./prog:(main+0x1d)[0x401136]", 2},
				{traces.OpFree, 0x4052a0, 0, "./prog:[0x401153]", 3},
				end,
			},
		},
		{
			name: "realloc halves are a free and a malloc",
			log:  "+ 0x10 0x8\n< 0x10\n> 0x20 0x40\n",
			want: []got{
				{traces.OpMalloc, 0x10, 8, "", 1},
				{traces.OpFree, 0x10, 0, "", 2},
				{traces.OpMalloc, 0x20, 0x40, "", 3},
				end,
			},
		},
		{
			name: "failed realloc, failed malloc, End and blank lines yield nothing",
			log:  "+ 0x10 0x8\n\n! 0x10 0x1000\n+ (nil) 0x100000\n= End\n  \n- 0x10\n",
			want: []got{
				{traces.OpMalloc, 0x10, 8, "", 1},
				{traces.OpFree, 0x10, 0, "", 7},
				end,
			},
		},
		{
			name: "zero size written as 0, upper-case hex, CRLF, no final newline",
			log:  "+ 0xABC 0\r\n- 0xabc",
			want: []got{
				{traces.OpMalloc, 0xabc, 0, "", 1},
				{traces.OpFree, 0xabc, 0, "", 2},
				end,
			},
		},
		{
			name: "a free of NULL is yielded: the model treats it as a no-op",
			log:  "- (nil)\n",
			want: []got{{traces.OpFree, 0, 0, "", 1}, end},
		},
		{
			name: "a free before its malloc is read as written",
			log:  "@ t2 - 0x30\n@ t1 + 0x30 0x10\n",
			want: []got{
				{traces.OpFree, 0x30, 0, "t2", 1},
				{traces.OpMalloc, 0x30, 0x10, "t1", 2},
				end,
			},
		},
		{
			name: "tabs and runs of blanks split fields",
			log:  "@\tcaller\t +  0x1\t0x2 \n",
			want: []got{{traces.OpMalloc, 1, 2, "caller", 1}, end},
		},
		{
			name: "largest address",
			log:  "+ 0xffffffffffffffff 0x1\n",
			want: []got{{traces.OpMalloc, 0xffffffffffffffff, 1, "", 1}, end},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := readAll(tt.log)
			if err != nil {
				t.Fatalf("read: %#v", err)
			}
			if diff := cmp.Diff(tt.want, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name  string
		log   string
		line  int
		event int
		field string
	}{
		{"unknown op", "+ 0x1 0x2\n* 0x1\n", 2, 1, "op"},
		{"op of two characters", "++ 0x1 0x2\n", 1, 0, "op"},
		{"caller without op", "= Start\n@ ./prog:[0x1]\n", 2, 0, "op"},
		{"@ alone", "@\n", 1, 0, "caller"},
		{"address without 0x", "- 1234\n", 1, 0, "addr"},
		{"address not hex", "- 0x12g4\n", 1, 0, "addr"},
		{"missing address", "- \n", 1, 0, "addr"},
		{"address of 17 digits", "- 0x10000000000000000\n", 1, 0, "addr"},
		{"missing size", "+ 0x10\n", 1, 0, "size"},
		{"bad size", "> 0x10 big\n", 1, 0, "size"},
		{"text after a free", "- 0x10 0x8\n", 1, 0, ""},
		{"text after a malloc", "+ 0x10 0x8 extra\n", 1, 0, ""},
		{"error after a skipped line numbers the next event", "+ 0x1 0x1\n= x\n- 0xz\n", 3, 1, "addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(tt.log)
			var te *traces.Error
			if !errors.As(err, &te) {
				t.Fatalf("got error %#v, want a *traces.Error", err)
			}
			if te.Line != tt.line || te.Event != tt.event || te.Field != tt.field {
				t.Errorf("error at line %d, event %d, field %q; want line %d, event %d, field %q",
					te.Line, te.Event, te.Field, tt.line, tt.event, tt.field)
			}
			if te.Err == nil {
				t.Error("error has no cause")
			}
		})
	}
}

func TestReaderHeader(t *testing.T) {
	h := NewReader(strings.NewReader("")).Header()
	want := traces.Header{Format: traces.FormatName, Version: traces.Version, Effects: false, Source: "glibc mtrace"}
	if h != want {
		t.Errorf("Header() = %+v, want %+v", h, want)
	}
}

func TestReaderEndsOnce(t *testing.T) {
	r := NewReader(strings.NewReader("+ 0x1 0x1\n"))
	var ev traces.Event
	for i, want := range []error{nil, nil, io.EOF, io.EOF} {
		if err := r.Next(&ev); err != want {
			t.Fatalf("call %d: Next = %v, want %v", i, err, want)
		}
	}
}

func TestReaderLongLine(t *testing.T) {
	caller := strings.Repeat("x", 3*bufSize)
	evs, err := readAll("+ 0x1 0x1\n@ " + caller + " - 0x1\n- 0x2\n")
	if err != nil {
		t.Fatalf("read: %#v", err)
	}
	if len(evs) != 4 || evs[1].Site != caller || evs[2].Addr != 2 || evs[2].Line != 3 {
		t.Errorf("long line misread: %d events", len(evs))
	}
}

// failing is a reader that fails after its data.
type failing struct{ data io.Reader }

func (f failing) Read(p []byte) (int, error) {
	n, err := f.data.Read(p)
	if err == io.EOF {
		return n, errors.New("disk on fire")
	}
	return n, err
}

func TestReaderReadFailure(t *testing.T) {
	r := NewReader(failing{strings.NewReader("+ 0x1 0x1\n")})
	var ev traces.Event
	if err := r.Next(&ev); err != nil {
		t.Fatalf("first event: %v", err)
	}
	err := r.Next(&ev)
	var te *traces.Error
	if !errors.As(err, &te) || te.Line != 2 || te.Event != 1 {
		t.Fatalf("got %#v, want a *traces.Error at line 2, event 1", err)
	}
}

func TestSiteCacheBounded(t *testing.T) {
	c := newSiteCache(4)
	a := c.intern([]byte("a"))
	if b := c.intern([]byte("a")); b != a {
		t.Fatal("equal callers not interned")
	}
	for _, s := range []string{"b", "c", "d", "e", "f"} {
		c.intern([]byte(s))
		if len(c.m) > 4 {
			t.Fatalf("cache grew to %d entries, bound 4", len(c.m))
		}
	}
	if got := c.intern([]byte("a")); got != "a" {
		t.Errorf("intern after reset = %q", got)
	}
}

// TestReaderAllocs checks that reading a line allocates nothing once the
// caller cache holds the log's callers: a log of millions of lines must
// not make millions of strings.
func TestReaderAllocs(t *testing.T) {
	const lines = 1000
	var b strings.Builder
	for i := range lines {
		b.WriteString("@ /lib/libpython3.so:(PyMem_Malloc+0x1a)[0x7f00aa] + 0x55b8e5496")
		b.WriteString(string("0123456789abcdef"[i%16]))
		b.WriteString("a0 0x20\n@ /lib/libpython3.so:(PyMem_Free+0x9)[0x7f00bb] - 0x55b8e54964a0\n")
	}
	log := b.String()
	sr := strings.NewReader(log)
	r := NewReader(sr)
	var ev traces.Event
	allocs := testing.AllocsPerRun(5, func() {
		sr.Reset(log)
		r.br.Reset(sr)
		r.done = false
		for r.Next(&ev) == nil {
		}
	})
	if perLine := allocs / (2 * lines); perLine > 0.01 {
		t.Errorf("%.3f allocations per line, want none", perLine)
	}
}

// TestReaderErrorMessages holds the messages of input errors to what a
// person needs: an empty log says it is empty, a byte-order mark is named,
// and no echo of the log is longer than a line, however long the field.
func TestReaderErrorMessages(t *testing.T) {
	huge := strings.Repeat("A", 8<<20)   // a line far past MaxLine
	long := strings.Repeat("A", 512<<10) // a line far past the read buffer
	n := strconv.Itoa(len(long))
	tests := []struct {
		name string
		log  string
		want string // the whole message
	}{
		{"empty", "", `event 0: ` + errEmpty.Error()},
		{"only blank lines", "\n  \n\r\n", `event 0: ` + errEmpty.Error()},
		{"byte-order mark", "\ufeff= Start\n+ 0x10 0x8\n", `line 1: event 0: ` + errBOM.Error()},
		{"byte-order mark on a caller line", "\ufeff@ a:[0x1] + 0x10 0x8\n", `line 1: event 0: ` + errBOM.Error()},
		{"short field, whole", "- 0x10zz\n", `line 1: event 0: field "addr": bad address "0x10zz" (want 0x and hex digits, or (nil))`},
		{"huge address", "- 0x" + huge + "\n", `line 1: event 0: field "addr": ` + errLongLine.Error() + `; it runs on from "0x` + huge[:38] + `"...`},
		{"huge operation", "+ 0x1 0x1\n" + huge + "\n", `line 2: event 1: field "op": ` + errLongLine.Error() + `; it runs on from "` + huge[:40] + `"...`},
		{"huge size", "+ 0x10 " + huge + "\n", `line 1: event 0: field "size": ` + errLongLine.Error() + `; it runs on from "` + huge[:40] + `"...`},
		{"huge trailing field", "- 0x10 " + huge + "\n", `line 1: event 0: ` + errLongLine.Error() + `; it runs on from "` + huge[:40] + `"...`},
		{"long address, whole", "- 0x" + long + "\n", `line 1: event 0: field "addr": bad address "0x` + long[:60] + `"... (` + strconv.Itoa(len(long)+2) + ` bytes) (want 0x and hex digits, or (nil))`},
		{"long operation, whole", "+ 0x1 0x1\n" + long + "\n", `line 2: event 1: field "op": unknown operation "` + long[:62] + `"... (` + n + ` bytes) (want one of + - < > ! =)`},
		{"escapes count toward the bound", "- " + strings.Repeat("\x01", 100) + "\n", `line 1: event 0: field "addr": bad address "` + strings.Repeat(`\x01`, 15) + `"... (100 bytes) (want 0x and hex digits, or (nil))`},
		{"cut on a character boundary", "- " + strings.Repeat("é", 100) + "\n", `line 1: event 0: field "addr": bad address "` + strings.Repeat("é", 31) + `"... (200 bytes) (want 0x and hex digits, or (nil))`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(tt.log)
			var te *traces.Error
			if !errors.As(err, &te) {
				t.Fatalf("got error %v, want a *traces.Error", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %.300s\nwant %.300s", got, tt.want)
			}
			if len(err.Error()) > 200 {
				t.Errorf("message of %d bytes: too long to read", len(err.Error()))
			}
		})
	}
}
