package mtrace

// Hex numbers for the general parser, which reads every form glibc's
// script accepts: any case, with or without "0x", up to 16 digits after
// leading zeros.

// hexDigits reads a non-empty run of hex digits that fits in 64 bits.
func hexDigits(b []byte) (uint64, bool) {
	for len(b) > 16 && b[0] == '0' {
		b = b[1:] // leading zeros beyond 16 digits do not overflow
	}
	v, start, prefixed, ok := hexBack(b, len(b))
	return v, ok && !prefixed && start == 0
}

// hexBack reads the hex number that ends at b[end] (exclusive), backwards,
// as glibc writes addresses ("0x" and digits) and sizes (the same, or a
// bare "0"). It returns the value, where the number starts, whether it had
// the "0x" prefix, and false if there is no number of 1 to 16 digits there.
func hexBack(b []byte, end int) (v uint64, start int, prefixed, ok bool) {
	i, shift := end, uint(0)
	for ; i > 0; i-- {
		d := hexVal[b[i-1]]
		if d > 15 {
			break
		}
		if shift == 64 {
			return 0, 0, false, false
		}
		v |= uint64(d) << shift
		shift += 4
	}
	if i == end {
		return 0, 0, false, false
	}
	if i >= 2 && (b[i-1] == 'x' || b[i-1] == 'X') && b[i-2] == '0' {
		return v, i - 2, true, true
	}
	return v, i, false, true
}

// hexVal maps a hex digit to its value and every other byte to 0xff.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return t
}()
