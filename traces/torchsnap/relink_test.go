package torchsnap

import (
	"encoding/binary"
	"strconv"
)

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
