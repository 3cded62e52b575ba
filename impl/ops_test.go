package impl_test

import (
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// TestCalls runs each call through its cases: the well-formed ones, NULL,
// and every misuse, checking the errors (inline in the script), the trace
// recorded with effects, and the final State.
func TestCalls(t *testing.T) {
	cases := []struct {
		name  string
		s     script
		trace string
		state string
	}{
		// scopes
		{"exit releases the scope's objects",
			script{"enter", "a=alloc 64", "b=alloc 16", "exit"},
			"scope_enter; alloc a 64; alloc b 16; scope_exit; free b; free a",
			"objects  | scopes  | params "},
		{"exit with no scope is a misuse",
			script{"exit !misuse"},
			"scope_exit",
			"objects  | scopes  | params "},
		{"exit skips a record whose object died",
			script{"enter", "a=alloc 64", "register a", "exit"},
			"scope_enter; alloc a 64; register a; scope_exit; free a",
			"objects  | scopes  | params "},
		{"exit releases only the top scope",
			script{"enter", "a=alloc 64", "enter", "b=alloc 64", "exit"},
			"scope_enter; alloc a 64; scope_enter; alloc b 64; scope_exit; free b",
			"objects a:1 | scopes [a] | params "},

		// alloc
		{"alloc of size 0 is NULL",
			script{"enter", "z=alloc 0", "acquire z", "release z", "register z", "unregister z", "exit"},
			"scope_enter; alloc null 0; acquire null; release null; register null; unregister null; scope_exit",
			"objects  | scopes  | params "},
		{"alloc with no scope makes an object with no record",
			script{"a=alloc 64 !misuse"},
			"alloc a 64",
			"objects a:1 | scopes  | params "},

		// acquire, release
		{"acquire and release move the count",
			script{"enter", "a=alloc 64", "acquire a", "acquire a", "release a"},
			"scope_enter; alloc a 64; acquire a; acquire a; release a",
			"objects a:2 | scopes [a] | params "},
		{"release to 0 frees",
			script{"enter", "a=alloc 64", "release a"},
			"scope_enter; alloc a 64; release a; free a",
			"objects  | scopes [] | params "},
		{"release of a dead object is a double free",
			script{"enter", "a=alloc 64", "release a", "release a !double-free"},
			"scope_enter; alloc a 64; release a; free a; release a",
			"objects  | scopes [] | params "},
		{"calls on a dead object are uses after free",
			script{"enter", "a=alloc 64", "release a", "acquire a !use-after-free",
				"register a !use-after-free", "unregister a !use-after-free", "param w a !use-after-free",
				"s=struct 32 a !use-after-free"},
			"scope_enter; alloc a 64; release a; free a; acquire a; register a; unregister a; param_register w a; struct_init s 32 [a]",
			"objects s:1 | scopes [s] | params "},
		{"calls on an address never allocated are invalid",
			script{"enter", "a=alloc 64", "acquire 0x1234 !invalid-address",
				"release 0x40000040 !invalid-address", "release 0x40000008 !invalid-address",
				"register 0x10 !invalid-address", "param w 0x7 !invalid-address"},
			"scope_enter; alloc a 64; acquire 0x1234; release 0x40000040; release 0x40000008; register 0x10; param_register w 0x7",
			"objects a:1 | scopes [a] | params "},

		// register, unregister
		{"register adds a record without counting",
			script{"enter", "a=alloc 64", "unregister a", "register a"},
			"scope_enter; alloc a 64; unregister a; register a",
			"objects a:1 | scopes [a] | params "},
		{"register with no scope is a misuse",
			script{"a=alloc 64 !misuse", "register a !misuse", "register null", "release a", "register a !misuse"},
			"alloc a 64; register a; register null; release a; free a; register a",
			"objects  | scopes  | params "},
		{"unregister removes the newest record from the top down",
			script{"enter", "a=alloc 64", "enter", "register a", "unregister a", "exit"},
			"scope_enter; alloc a 64; scope_enter; register a; unregister a; scope_exit",
			"objects a:1 | scopes [a] | params "},
		{"unregister with no record is a misuse",
			script{"enter", "a=alloc 64", "unregister a", "unregister a !misuse", "exit"},
			"scope_enter; alloc a 64; unregister a; unregister a; scope_exit",
			"objects a:1 | scopes  | params "},

		// address reuse
		{"a stale record is purged when its address is reused",
			script{"enter", "a=alloc 64", "release a", "b=alloc 64", "param w b", "exit"},
			"scope_enter; alloc a 64; release a; free a; alloc b 64; param_register w b; scope_exit",
			"objects b:1 | scopes  | params w:b"},
		{"a stale record in an outer scope is purged too",
			script{"enter", "a=alloc 64", "enter", "release a", "b=alloc 64", "exit", "exit"},
			"scope_enter; alloc a 64; scope_enter; release a; free a; alloc b 64; scope_exit; free b; scope_exit",
			"objects  | scopes  | params "},

		// structs
		{"struct_init acquires its fields; the struct's death releases them",
			script{"enter", "t=alloc 16", "s=struct 32 t null", "exit"},
			"scope_enter; alloc t 16; struct_init s 32 [t null]; scope_exit; free s; free t",
			"objects  | scopes  | params "},
		{"struct_init counts",
			script{"enter", "t=alloc 16", "s=struct 32 t t"},
			"scope_enter; alloc t 16; struct_init s 32 [t t]",
			"objects s:1 t:3 | scopes [t s] | params "},
		{"a dying struct releases its fields recursively, fields first",
			script{"enter", "t=alloc 16", "s=struct 32 t", "u=struct 48 s", "release t", "release s", "release u"},
			"scope_enter; alloc t 16; struct_init s 32 [t]; struct_init u 48 [s]; release t; release s; release u; free t; free s; free u",
			"objects  | scopes [] | params "},
		{"unregister of a struct is shallow",
			script{"enter", "t=alloc 16", "s=struct 32 t", "unregister s", "exit", "enter", "register s", "exit"},
			"scope_enter; alloc t 16; struct_init s 32 [t]; unregister s; scope_exit; scope_enter; register s; scope_exit; free t; free s",
			"objects  | scopes  | params "},
		{"struct of size 0 without fields is NULL",
			script{"s=struct 0", "register s", "u=struct 0 null null"},
			"struct_init null 0 []; register null; struct_init null 0 [null null]",
			"objects  | scopes  | params "},
		{"struct of size 0 with fields is a misuse",
			script{"enter", "t=alloc 16", "s=struct 0 t !misuse"},
			"scope_enter; alloc t 16; struct_init null 0 [t]",
			"objects t:1 | scopes [t] | params "},
		{"a dead field at the address the struct gets is still dead",
			script{"enter", "t=alloc 64", "release t", "s=struct 64 t !use-after-free", "exit"},
			"scope_enter; alloc t 64; release t; free t; struct_init s 64 [s]; scope_exit; free s",
			"objects  | scopes  | params "},
		{"struct_init finds several misuses at once",
			script{"t=alloc 16 !misuse", "release t", "s=struct 32 t 0x99 !misuse,use-after-free,invalid-address"},
			"alloc t 16; release t; free t; struct_init s 32 [t 0x99]",
			"objects s:1 | scopes  | params "},
		{"struct_init with no scope makes the struct with no record",
			script{"s=struct 16 !misuse"},
			"struct_init s 16 []",
			"objects s:1 | scopes  | params "},
		{"a field over-released and reused is not released again",
			script{"enter", "t=alloc 16", "s=struct 32 t", "release t", "release t", "u=alloc 16",
				"release s !double-free"},
			"scope_enter; alloc t 16; struct_init s 32 [t]; release t; release t; free t; alloc u 16; release s; free s",
			"objects u:1 | scopes [u] | params "},
		{"a dead field found at scope exit",
			script{"enter", "t=alloc 16", "s=struct 32 t", "release t", "release t", "exit !double-free"},
			"scope_enter; alloc t 16; struct_init s 32 [t]; release t; release t; free t; scope_exit; free s",
			"objects  | scopes  | params "},

		// params
		{"param_register acquires, re-registering releases the old one after",
			script{"enter", "a=alloc 64", "param w a", "exit", "param w a", "enter", "b=alloc 64", "param w b", "exit"},
			"scope_enter; alloc a 64; param_register w a; scope_exit; param_register w a; scope_enter; alloc b 64; param_register w b; free a; scope_exit",
			"objects b:1 | scopes  | params w:b"},
		{"param_release releases and forgets",
			script{"enter", "a=alloc 64", "param w a", "exit", "unparam w", "unparam w !misuse"},
			"scope_enter; alloc a 64; param_register w a; scope_exit; param_release w; free a; param_release w",
			"objects  | scopes  | params "},
		{"param_register of NULL keeps the name",
			script{"enter", "a=alloc 64", "param w a", "param w null", "param g null", "unparam g !misuse"},
			"scope_enter; alloc a 64; param_register w a; param_register w null; param_register g null; param_release g",
			"objects a:2 | scopes [a] | params w:a"},
		{"a parameter whose object died",
			script{"enter", "a=alloc 64", "param w a", "release a", "release a", "b=alloc 64",
				"unparam w !double-free"},
			"scope_enter; alloc a 64; param_register w a; release a; release a; free a; alloc b 64; param_release w",
			"objects b:1 | scopes [b] | params "},
		{"re-registering a name whose object died",
			script{"enter", "a=alloc 64", "param w a", "release a", "release a", "b=alloc 64",
				"param w b !double-free"},
			"scope_enter; alloc a 64; param_register w a; release a; release a; free a; alloc b 64; param_register w b",
			"objects b:2 | scopes [b] | params w:b"},

		// end
		{"end with scopes open is a misuse",
			script{"enter", "a=alloc 64", "end !misuse"},
			"scope_enter; alloc a 64; end",
			"objects a:1 | scopes [a] | params "},
		{"end leaves the books as they are",
			script{"enter", "a=alloc 64", "param w a", "exit", "end"},
			"scope_enter; alloc a 64; param_register w a; scope_exit; end",
			"objects a:1 | scopes  | params w:a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := execute(t, impl.Config{}, true, c.s)
			if got := r.Trace(); got != c.trace {
				t.Errorf("trace:\n got %s\nwant %s", got, c.trace)
			}
			if got := r.State(); got != c.state {
				t.Errorf("state:\n got %s\nwant %s", got, c.state)
			}
		})
	}
}
