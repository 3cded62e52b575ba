package drive

import (
	"strings"
	"testing"
)

func TestParseCall(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // the call as AppendJSON writes it, or the error's text
		id   int64
	}{
		{`{"id":3,"op":"alloc","handle":2,"size":16}`, `{"op":"alloc","handle":2,"size":16}`, 3},
		{` { "op" : "struct_init" , "handle":4,"size":8,"fields":[ 1 , 0 ],"x":{"y":[1,"]"]}} `, `{"op":"struct_init","handle":4,"size":8,"fields":[1,0]}`, -1},
		{`{"op":"param_register","name":"w\u0021","target":1}`, `{"op":"param_register","name":"w!","target":1}`, -1},
		{`{"op":"arena_get","handle":1,"slot":0,"size":16,"var":"a0"}`, `{"op":"arena_get","handle":1,"slot":0,"size":16,"var":"a0"}`, -1},
		{`{"op":"release"}`, "release needs [target]", -1},
		{`{"op":"free","addr":"0x10"}`, `op "free" is not a call`, -1},
		{`{"op":"alloc","handle":-1,"size":16}`, "want an integer", -1},
		{`{"op":"alloc","handle":1,"size":16} x`, "want the end of the line", -1},
		{`{"op":"alloc","handle":1,"size":16`, "unexpected end of the line", -1},
		{`[]`, "want '{'", -1},
	} {
		c, id, reset, err := ParseCall([]byte(tc.line))
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseCall(%s): %v, want an error with %q", tc.line, err, tc.want)
			}
			continue
		}
		if got := string(c.AppendJSON(nil)); got != tc.want || id != tc.id || reset {
			t.Errorf("ParseCall(%s) = %s, id %d, reset %v; want %s, id %d", tc.line, got, id, reset, tc.want, tc.id)
		}
	}
	if _, id, reset, err := ParseCall([]byte(`{"id":9,"op":"reset"}`)); !reset || id != 9 || err != nil {
		t.Errorf("reset: %v %v %v", id, reset, err)
	}
}

func TestParseAnswer(t *testing.T) {
	var p answerParser
	var a Answer
	for _, tc := range []struct {
		line, err string
	}{
		{`{"id":1,"events":[{"op":"alloc","addr":"0x10","size":16}],"outcome":"done"}`, ""},
		{`{"id":2,"events":[{"op":"release","addr":"0x10"}],"outcome":"refused","message":"no \"object\"","kinds":["double-free"]}`, ""},
		{`{"id":3,"events":[],"outcome":"maybe"}`, `"outcome" "maybe"`},
		{`{"events":[],"outcome":"done"}`, `no "id"`},
		{`{"id":4,"events":[{"op":"alloc","size":16}],"outcome":"done"}`, "event 0"},
		{`{"id":5,"events":[],"outcome":"refused","kinds":["oops"]}`, `"oops" is not a violation kind`},
		{`{"id":6,"events":[{"op":"end"}],"outcome":"done"}}`, "the end of the line"},
	} {
		err := p.parse([]byte(tc.line), &a)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("parse(%s): %v", tc.line, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parse(%s): %v, want an error with %q", tc.line, err, tc.err)
		}
	}
	_ = p.parse([]byte(`{"id":2,"events":[{"op":"release","addr":"0x10"}],"outcome":"refused","message":"no \"object\"","kinds":["double-free"]}`), &a)
	if !a.Refused || a.Message != `no "object"` || len(a.Kinds) != 1 || len(a.Events) != 1 || a.ID != 2 {
		t.Errorf("parsed %+v", a)
	}
}

func TestRingKeepsTheLast(t *testing.T) {
	r := newRing(8)
	r.Write([]byte("abc"))
	if got := r.String(); got != "abc" {
		t.Errorf("got %q", got)
	}
	r.Write([]byte("defghij"))
	r.Write([]byte("klmnopqrstuvwxyz"))
	if got, want := r.String(), "[18 earlier bytes dropped]\nstuvwxyz"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r.Write([]byte("12"))
	if got, want := r.String(), "[20 earlier bytes dropped]\nuvwxyz12"; got != want || r.Kept() != 8 {
		t.Errorf("got %q (%d kept), want %q", got, r.Kept(), want)
	}
}

func TestParseAnswerBoundsEvents(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"id":1,"outcome":"done","events":[`)
	for i := range maxAnswerEvents + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"op":"free","addr":"0x10"}`)
	}
	b.WriteString(`]}`)
	var p answerParser
	var a Answer
	if err := p.parse([]byte(b.String()), &a); err == nil || !strings.Contains(err.Error(), "more than 16384 events") {
		t.Errorf("an answer of %d events: %v", maxAnswerEvents+1, err)
	}
}
