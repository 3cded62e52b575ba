package properties

import "github.com/tlcheck/tlcheck/traces"

// Encode is Decode's inverse: it returns bytes that Decode turns back into
// p, for programs whose sizes, names and indices Decode can produce (a
// misuse that Decode turns into a well-formed call three times in four is
// encoded as the fourth). It writes fuzz seeds from readable programs.
func Encode(p Program) []byte {
	var out []byte
	var sh shape
	for _, s := range p.Steps {
		sure, _ := sh.misuse(s.Op)
		out = append(out, opByte(s.Op, sure))
		switch s.Op {
		case traces.OpAlloc:
			out = append(out, sizeByte(s.Size))
		case traces.OpStructInit:
			out = append(out, sizeByte(s.Size), byte(len(s.Fields)))
			for _, f := range s.Fields {
				out = append(out, refByte(f))
			}
		case traces.OpAcquire, traces.OpRelease, traces.OpRegister, traces.OpUnregister:
			out = append(out, refByte(s.Target))
		case traces.OpParamRegister:
			out = append(out, anyNameByte(s.Name), refByte(s.Target))
		case traces.OpParamRelease:
			out = append(out, releaseNameByte(s.Name, sh.names))
		}
		sh = sh.after(s)
	}
	return out
}

// opByte returns a byte that decodes to op; with misuse, one that keeps
// op's misuse rather than turning it into scope_enter.
func opByte(op traces.Op, misuse bool) byte {
	for i, o := range opTable {
		if o == op && (!misuse || keepsMisuse(byte(i))) {
			return byte(i)
		}
	}
	return 0
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
		if Names[b%len(Names)] == name {
			return byte(b)
		}
	}
	return 0
}

// releaseNameByte returns a param_release name byte that decodes to name
// given the names registered.
func releaseNameByte(name string, registered []string) byte {
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
