package torchsnap

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The corners of protocol 0's text and of the machine's bounds: pins that
// need no Python, and a generator of corner cases held to Python's own
// pickle (TestPickleCorners).

// TestTextCorners pins what the machine reads of protocol 0's text where
// a slip of one digit or one comparison would read something else.
func TestTextCorners(t *testing.T) {
	tests := []struct {
		name, pickle string
		want         string // canonical form (canon), or "error: " and a part of the error
	}{
		// Three octal digits at most: \1234 is \123 ("S") and "4".
		{"octal escape of three digits", `S'\1234'` + "\n.", "s" + fmt.Sprintf("%x", "S4")},
		{"octal escape of one digit", `S'\7a'` + "\n.", "s0761"},
		{"octal escape of two digits", `S'\101'` + "\n.", "s41"},
		// CPython's C unpickler reads INT's text with strtol(s, 0): "07"
		// is 7 and "010" is 8 (octal), where its Python unpickler, with
		// int(s, 0), refuses both. Read as decimal, "010" would be 10.
		// Python's pickler never writes a leading zero: refused.
		{"INT with a leading zero", "I07\n.", "error: is not a decimal integer"},
		{"INT octal-looking", "I010\n.", "error: is not a decimal integer"},
		{"LONG with a leading zero", "L07L\n.", "error: is not a decimal integer"},
		{"INT of zeros", "I000\n.", "i0"},
		{"INT 00 is False", "I00\n.", "F"},
		{"INT 01 is True", "I01\n.", "T"},
		{"INT 10", "I10\n.", "ia"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeGeneric([]byte(tc.pickle))
			if part, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), part) {
					t.Fatalf("%q: error %v, want one with %q", tc.pickle, err, part)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.pickle, err)
			}
			if got, _ := canon(v); got != tc.want {
				t.Errorf("%q reads as %s, want %s", tc.pickle, got, tc.want)
			}
		})
	}
}

// TestLineLimit: a protocol-0 argument of exactly maxLine bytes is read
// (the limit is on its text, not the newline); one byte more is refused.
func TestLineLimit(t *testing.T) {
	for _, op := range []string{"V", "S"} {
		for _, n := range []int{maxLine - 1, maxLine, maxLine + 1} {
			text := strings.Repeat("a", n)
			if op == "S" {
				text = "'" + text[2:] + "'"
			}
			v, err := decodeGeneric([]byte(op + text + "\n."))
			switch {
			case n > maxLine:
				if err == nil || !strings.Contains(err.Error(), "is longer than") {
					t.Errorf("%s of %d bytes: error %v, want one that it is too long", op, n, err)
				}
			case err != nil:
				t.Errorf("%s of %d bytes: %v", op, n, err)
			case v.k != kStr || int(v.i) != len(strings.Trim(text, "'")):
				t.Errorf("%s of %d bytes: read %s of %d bytes", op, n, typeName(v), v.i)
			}
		}
	}
}

// corner is a generated pickle and what the machine may do with it
// where Python's pickle reads it.
type corner struct {
	name string
	data []byte
	// mayRefuse is a part of the error with which the machine may refuse
	// what Python reads: a form Python's pickler never writes, or past a
	// bound. "" for none: it must read what Python reads.
	mayRefuse string
	// mustRefuse: the machine must refuse, whatever Python does (a form
	// that CPython's two unpicklers read differently).
	mustRefuse bool
	// long is the str the machine must read where the value is too long
	// for the oracle to write out.
	long string
}

// protoPrefix is how a pickle of protocol p starts: with PROTO from
// protocol 1 on (Python writes it from 2; it reads it in any).
func protoPrefix(p int) string {
	if p == 0 {
		return ""
	}
	return "\x80" + string(rune(p))
}

// textCorners generates protocol-0 text arguments at their corners: every
// escape of STRING and UNICODE, leading zeros and signs in INT, LONG and
// FLOAT, and texts at and around the machine's bounds. Each is pickled
// in one of the protocols 0 to 5 in turn, alone or in a list.
func textCorners() []corner {
	var cs []corner
	add := func(name, arg string, mayRefuse string, mustRefuse bool) {
		cs = append(cs, corner{name: name, data: []byte(arg), mayRefuse: mayRefuse, mustRefuse: mustRefuse})
	}
	// STRING: every byte after a backslash, octal escapes of one to four
	// digits, \x with zero to three hex digits, quotes, and raw bytes.
	for c := 0x20; c < 0x7f; c++ {
		q := []string{"'", `"`}[c%2]
		add(fmt.Sprintf("STRING escape \\%c", c), "S"+q+"a\\"+string(rune(c))+"b"+q+"\n", "", false)
	}
	for _, digits := range strs("01347", 1, 4) {
		add("STRING octal \\"+digits, `S'\`+digits+`'`+"\n", "", false)
		add("STRING octal \\"+digits+" then 8", `S"\`+digits+`8"`+"\n", "", false)
	}
	for _, h := range strs("0aFg", 0, 3) {
		add(`STRING hex \x`+h, `S'\x`+h+`'`+"\n", "", false)
	}
	for _, s := range []string{`''`, `""`, `'`, `"`, `'"`, `"'`, `'a`, `a'`, `'a'b'`, `"'"`, `'"'`, `'\''`, `"\""`,
		`'a\'`, `'\\'`, `'\\\'`, "'\xe9'", "'\x7f'", "'\x00'", `'\0'`, `'\377'`, `'\400'`, `'\477'`, " 'a'", "'a' ", ``} {
		add(fmt.Sprintf("STRING %q", s), "S"+s+"\n", "", false)
	}
	// UNICODE (raw-unicode-escape): \u and \U with too few, enough and
	// more hex digits, in and out of range, surrogates, runs of
	// backslashes, every byte after a backslash, raw Latin-1 bytes.
	for _, h := range append(strs("0aG", 0, 4), "00e9", "d800", "dfff", "ffff", "12345") {
		add(`UNICODE \u`+h, `Va\u`+h+"\n", "", false)
	}
	for _, h := range []string{"", "0", "0001f600", "0010ffff", "00110000", "ffffffff", "80000000", "0000d800", "0000004", "000000041"} {
		add(`UNICODE \U`+h, `V\U`+h+"\n", "", false)
	}
	for n := 0; n <= 4; n++ {
		add(fmt.Sprintf("UNICODE %d backslashes before u0041", n), "V"+strings.Repeat(`\`, n)+"u0041\n", "", false)
	}
	for c := 0x20; c < 0x100; c += 1 + c/0x80*6 {
		add(fmt.Sprintf("UNICODE \\ then 0x%02x", c), "Va\\"+string([]byte{byte(c)})+"b\n", "", false)
	}
	for _, s := range []string{"", `\`, "\xe9", "\x80\xff", "a\x00b", "\r"} {
		add(fmt.Sprintf("UNICODE %q", s), "V"+s+"\n", "", false)
	}
	// INT: every text of up to four of "0", "1", "7", "+", "-"; LONG,
	// with its L and without, of up to three.
	// Python's pickler writes INT as %d (and 00, 01 for False and True),
	// LONG as %d and L: other forms the machine may refuse; a leading
	// zero before other digits, which CPython's C unpickler reads as
	// octal (strtol) and its Python one refuses, it must refuse.
	for _, s := range strs("017+-", 1, 4) {
		digits := strings.TrimLeft(s, "+-")
		octal := len(s)-len(digits) <= 1 && len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" &&
			strings.Trim(digits, "01234567") == "" && s != "01"
		// "+0", "-0" and "+1" are bools to the C unpickler (two bytes of
		// value 0 or 1), ints to the Python one.
		signedBool := s == "+0" || s == "-0" || s == "+1"
		add("INT "+s, "I"+s+"\n", mayRefuseInt(s, true), octal || signedBool)
		if len(s) <= 3 {
			add("LONG "+s, "L"+s+"L\n", mayRefuseInt(s, false), false)
			add("LONG "+s+" without L", "L"+s+"\n", mayRefuseInt(s, false), false)
		}
	}
	for _, s := range []string{"", " 7", "7 ", "0x10", "1_0", "L", "LL", "7LL", "-", "+"} {
		add(fmt.Sprintf("INT %q", s), "I"+s+"\n", "is not a decimal", false)
		add(fmt.Sprintf("LONG %q", s), "L"+s+"\n", "is not a decimal", false)
	}
	// The ends of 64 bits, and of maxDigits.
	for _, s := range []string{"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "-18446744073709551616", strings.Repeat("9", maxDigits),
		"-" + strings.Repeat("9", maxDigits), "1" + strings.Repeat("0", maxDigits-1)} {
		add("INT "+s, "I"+s+"\n", "", false)
		add("LONG "+s, "L"+s+"L\n", "", false)
	}
	for _, s := range []string{strings.Repeat("9", maxDigits+1), strings.Repeat("0", maxDigits+1), strings.Repeat("9", maxDigits+8)} {
		add(fmt.Sprintf("INT of %d digits", len(s)), "I"+s+"\n", "of more than 40 digits", false)
		add(fmt.Sprintf("LONG of %d digits", len(s)), "L"+s+"L\n", "of more than 40 digits", false)
	}
	// FLOAT: as repr writes floats, and forms it never writes.
	for _, s := range []string{"0.0", "-0.0", "1.5", "-1.5", "1e+16", "1.7976931348623157e+308", "5e-324", "inf", "-inf", "nan",
		"2.2250738585072014e-308", "123456789.125", "0.1"} {
		add("FLOAT "+s, "F"+s+"\n", "", false)
	}
	for _, s := range []string{"007", "-007.50", ".5", "5.", "1e5", "1E+05", "+1", "-0", "1e999", "-1e999", "1.7976931348623159e308",
		"1e-999", "Infinity", "-Infinity", "INF", "NaN", "+nan", "-nan", "+inf", "infin", "1_0", " 1", "1 ", "0x1p3", "",
		"-", "e5", "1e", "1e+", "--1", "1..0", "0." + strings.Repeat("0", 60) + "1", "0." + strings.Repeat("0", 61) + "1",
		"0." + strings.Repeat("0", 62) + "1"} {
		add(fmt.Sprintf("FLOAT %q", s), "F"+s+"\n", "not a decimal float", false)
	}
	for i := range cs {
		if strings.HasPrefix(cs[i].name, "FLOAT") && len(cs[i].data) > 66 {
			cs[i].mayRefuse = "is longer than"
		}
	}
	// At and around the line limit, which bounds the text.
	for _, n := range []int{maxLine - 1, maxLine, maxLine + 1} {
		refuse := ""
		if n > maxLine {
			refuse = "is longer than"
		}
		a := strings.Repeat("a", n)
		cs = append(cs, corner{name: fmt.Sprintf("UNICODE of %d bytes", n), data: []byte("V" + a + "\n"), mayRefuse: refuse, long: a},
			corner{name: fmt.Sprintf("STRING of %d bytes", n), data: []byte("S'" + a[2:] + "'\n"), mayRefuse: refuse, long: a[2:]})
	}
	// Each in a protocol, in turn, alone or as the item of a list that
	// protocol 0 writes (with a PUT after the item).
	for i := range cs {
		p := i % 6
		arg := string(cs[i].data)
		if i%12 >= 6 {
			arg = "(lp0\n" + arg + "p1\na"
		}
		cs[i].data = []byte(protoPrefix(p) + arg + ".")
		cs[i].name += fmt.Sprintf(" (protocol %d)", p)
	}
	return cs
}

// mayRefuseInt is the reason the machine may refuse INT's or LONG's text
// s for: none where it is as Python's pickler writes it.
func mayRefuseInt(s string, isInt bool) string {
	digits := strings.TrimPrefix(s, "-")
	if digits != "" && strings.Trim(digits, "0123456789") == "" && (digits == "0" || digits[0] != '0') {
		return ""
	}
	if isInt && (s == "00" || s == "01") {
		return ""
	}
	return "PyTorch never" + "|" + "is not a decimal"
}

// strs returns every string of min to max letters of alphabet.
func strs(alphabet string, min, max int) []string {
	out := []string{}
	level := []string{""}
	for n := 0; n <= max; n++ {
		if n >= min {
			out = append(out, level...)
		}
		var next []string
		for _, s := range level {
			for _, c := range alphabet {
				next = append(next, s+string(c))
			}
		}
		level = next
	}
	return out
}

// TestPickleCorners holds the machine to Python's own pickle on the
// generated corners: it refuses what Python refuses, reads what Python
// reads as Python does, and refuses it only for the reason the corner
// allows.
func TestPickleCorners(t *testing.T) {
	o := pythonOracle()
	if o == nil {
		t.Skip("no python3 (or TLCHECK_NO_PYTHON is set): the corners are held to Python's own pickle; TestTextCorners and TestLineLimit pin some without it")
	}
	cs := textCorners()
	failed := 0
	for _, c := range cs {
		if err := checkCorner(t, o, c); err != nil {
			t.Errorf("%s: %v\npickle: %.200q", c.name, err, c.data)
			if failed++; failed == 20 {
				t.Fatal("and more")
			}
		}
	}
	t.Logf("%d corners", len(cs))
}

// checkCorner runs c through the machine and the oracle.
func checkCorner(t *testing.T, o *oracle, c corner) error {
	v, err := decodeGeneric(c.data)
	if err != nil {
		if te := (*Error)(nil); !errors.As(err, &te) {
			return fmt.Errorf("error %q (%T) is not an *Error", err, err)
		}
	}
	verdict, want, _ := strings.Cut(o.loadWithin(t, c.data, time.Minute), " ")
	pyReads := verdict == "ok" || verdict == "skip" && want == "too long"
	switch {
	case c.mustRefuse:
		if err == nil {
			s, _ := canon(v)
			return fmt.Errorf("read %.200s, want a refusal (Python: %s %s)", s, verdict, want)
		}
	case verdict == "err":
		if err == nil {
			s, _ := canon(v)
			return fmt.Errorf("read %.200s where Python's pickle refuses the input (%s)", s, want)
		}
	case !pyReads:
		return fmt.Errorf("the oracle says %s %s", verdict, want)
	case err != nil:
		for _, r := range strings.Split(c.mayRefuse, "|") {
			if r != "" && strings.Contains(err.Error(), r) {
				return nil
			}
		}
		return fmt.Errorf("refused with %q what Python's pickle reads as %.200s", err, want)
	case verdict == "skip":
		if c.long == "" {
			return errors.New("too long for the oracle, and no value to compare")
		}
		if v.k != kStr || v.str() != c.long {
			return fmt.Errorf("read %s of %d bytes, want the str of %d bytes Python reads", typeName(v), v.i, len(c.long))
		}
	default:
		got, cerr := canon(v)
		if cerr != nil {
			return cerr
		}
		if got != want {
			return fmt.Errorf("read %.200s where Python's pickle reads %.200s", got, want)
		}
	}
	return nil
}
