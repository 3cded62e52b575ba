package flat

// Encode is Decode's inverse: it returns bytes that Decode turns back into
// p, for programs whose sizes, names and indices Decode can produce (a
// misuse that Decode turns into a well-formed call three times in four is
// encoded as the fourth). Each op is written as the first byte of its
// call's range that fits, so the bytes are canonical. It writes fuzz seeds
// from readable programs.
func Encode(p Program) []byte {
	var out []byte
	var sh Shape
	for _, s := range p.Steps {
		c := CallOf(s.Op)
		if c == nil || c.width == 0 {
			continue // no byte decodes to it
		}
		sure, _ := sh.misuse(c)
		out = append(out, opByte(c, sure))
		for _, o := range c.operands {
			out = o.row().encode(out, s, sh)
		}
		sh = sh.after(s)
	}
	return out
}

// opByte returns a byte that decodes to c's op; with misuse, one that
// keeps the misuse rather than turning it into the call that avoids it.
func opByte(c *Call, misuse bool) byte {
	for b := c.code; b < c.code+c.width; b++ {
		if !misuse || keepsMisuse(byte(b)) {
			return byte(b)
		}
	}
	return byte(c.code)
}

func sizeByte(size uint64) byte {
	for i, s := range sizeTable {
		if s == size {
			return byte(i)
		}
	}
	return 0
}

// anyNameByte returns a name byte that decodes to name whatever is
// registered.
func anyNameByte(name string) byte {
	for b := nameAny; b < 256; b++ {
		if names[b%len(names)] == name {
			return byte(b)
		}
	}
	return 0
}

// heldNameByte returns a param_release name byte that decodes to name
// given the names registered.
func heldNameByte(name string, registered []string) byte {
	for i, n := range registered {
		if n == name {
			return byte(i)
		}
	}
	return anyNameByte(name)
}

func refByte(r Ref) byte {
	switch r.Pick {
	case Dead:
		return refDead + r.Index%(refNull-refDead)
	case Null:
		return refNull
	}
	return r.Index % refDead
}
