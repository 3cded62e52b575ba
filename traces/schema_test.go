package traces

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"pgregory.net/rapid"
)

// schemas are the parts of schema.json that tests check values against,
// loaded from the file (no network: every reference is inside it).
type schemas struct{ header, event, document *jsonschema.Schema }

func loadSchemas(t testing.TB) schemas {
	t.Helper()
	f, err := os.Open("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	compile := func(ptr string) *jsonschema.Schema {
		s, err := c.Compile(id + ptr)
		if err != nil {
			t.Fatalf("schema.json%s: %v", ptr, err)
		}
		return s
	}
	return schemas{compile("#/$defs/header"), compile("#/$defs/event"), compile("")}
}

// validate checks one JSON text against s.
func validate(s *jsonschema.Schema, text []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// validateTrace checks a trace file against the schema, by layout: a
// stream line by line, a document whole.
func (s schemas) validateTrace(data []byte, stream bool) error {
	if !stream {
		return validate(s.document, data)
	}
	header := true
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		sch := s.event
		if header {
			sch, header = s.header, false
		}
		if err := validate(sch, line); err != nil {
			return err
		}
	}
	if header {
		return validate(s.header, nil)
	}
	return nil
}

// TestSchemaTestdata checks every trace under testdata, at any depth,
// against both the schema and the Reader: the two must agree on each. A
// .json file whose object has neither "format" nor an "events" array is not
// a trace (an expectation beside one) and is skipped.
func TestSchemaTestdata(t *testing.T) {
	s := loadSchemas(t)
	n := 0
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.Name() == "fuzz" {
				return filepath.SkipDir // fuzz inputs, mostly not traces
			}
			return err
		}
		stream := strings.HasSuffix(path, ".jsonl")
		if !stream && !strings.HasSuffix(path, ".json") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !stream && !looksLikeDocument(data) {
			t.Logf("%s: not a trace, skipped", path)
			return nil
		}
		n++
		schemaErr := s.validateTrace(data, stream)
		_, _, _, readErr := readAll(bytes.NewReader(data))
		switch {
		case schemaErr == nil && readErr == nil:
		case schemaErr != nil && readErr != nil:
			t.Logf("%s: rejected by both (an unreadable-input example): %v", path, readErr)
		case schemaErr != nil:
			t.Errorf("%s: the Reader accepts it, the schema does not: %v", path, schemaErr)
		default:
			t.Errorf("%s: the schema accepts it, the Reader does not: %v", path, readErr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Errorf("checked %d traces under testdata, want at least the 5 of testdata/format", n)
	}
}

// looksLikeDocument reports whether data is a JSON object with a "format"
// key or an "events" array (or is not a JSON object at all: then it is a
// broken trace). An expected report has "events" too, but as a number.
func looksLikeDocument(data []byte) bool {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return true
	}
	_, format := obj["format"]
	events := bytes.TrimSpace(obj["events"])
	return format || len(events) > 0 && events[0] == '['
}

// TestSchemaAgrees feeds values that the Reader and the schema must judge
// alike: each bad one must be rejected by both, each tricky good one
// accepted by both.
func TestSchemaAgrees(t *testing.T) {
	s := loadSchemas(t)
	for _, tt := range []struct {
		event string // an event line, read after a valid header
		ok    bool
	}{
		{`{"op":"mallocc","addr":"0x10","size":8}`, false},
		{`{"addr":"0x10"}`, false},
		{`{"op":null}`, false},
		{`{"op":7}`, false},
		{`{"op":"free"}`, false},
		{`{"op":"free","addr":null}`, false},
		{`{"op":"malloc","addr":"0x10"}`, false},
		{`{"op":"malloc","addr":"0x10","size":-1}`, false},
		{`{"op":"malloc","addr":"0x10","size":1.5}`, false},
		{`{"op":"malloc","addr":"0x10","size":15e-1}`, false},
		{`{"op":"malloc","addr":"0x10","size":"8"}`, false},
		{`{"op":"malloc","addr":"0x10","size":18446744073709551616}`, false},
		{`{"op":"free","addr":true}`, false},
		{`{"op":"free","addr":"4096"}`, false},
		{`{"op":"free","addr":"0x"}`, false},
		{`{"op":"free","addr":"0xg"}`, false},
		{`{"op":"free","addr":" 0x1"}`, false},
		{`{"op":"free","addr":"0x10000000000000000"}`, false},
		{`{"op":"free","addr":-1}`, false},
		{`{"op":"free","addr":1.5}`, false},
		{`{"op":"free","addr":18446744073709551616}`, false},
		{`{"op":"free","addr":["0x1"]}`, false},
		{`{"op":"realloc","addr":"0x10","size":8}`, false},
		{`{"op":"struct_init","addr":"0x10","size":8}`, false},
		{`{"op":"struct_init","addr":"0x10","size":8,"fields":null}`, false},
		{`{"op":"struct_init","addr":"0x10","size":8,"fields":"0x1"}`, false},
		{`{"op":"struct_init","addr":"0x10","size":8,"fields":[true]}`, false},
		{`{"op":"param_register","addr":"0x10"}`, false},
		{`{"op":"param_register","name":3,"addr":"0x10"}`, false},
		{`{"op":"param_release"}`, false},
		{`{"op":"fn_enter"}`, false},
		{`{"op":"fn_enter","slots":-1}`, false},
		{`{"op":"fn_enter","slots":2147483648}`, false},
		{`{"op":"arena_get","addr":"0x10","size":8}`, false},
		{`{"op":"arena_get","slot":0.5,"addr":"0x10","size":8}`, false},
		{`{"op":"read","addr":"0x10","space":"gpu"}`, false},
		{`{"op":"read","addr":"0x10","size":-8}`, false},
		{`{"op":"read","addr":"0x10","var":1}`, false},
		{`{"op":"end","t":1.5}`, false},
		{`{"op":"end","t":9223372036854775808}`, false},
		{`{"op":"end","thread":true}`, false},
		{`{"op":"end","thread":1.5}`, false},
		{`{"op":"end","site":5}`, false},
		{`{"op":"alloc","addr":"0x10","size":8,"kind":1}`, false},
		{`{"op":"free","addr":"0x10","size":"big"}`, false},
		{`[{"op":"end"}]`, false},
		{`"end"`, false},

		{`{"op":"free","addr":"0X1F"}`, true},
		{`{"op":"free","addr":"0x00000000000000000000ffffffffffffffff"}`, true},
		{`{"op":"free","addr":18446744073709551615}`, true},
		{`{"op":"malloc","addr":0,"size":1e3}`, true},
		{`{"op":"malloc","addr":"0x0","size":64.0}`, true},
		{`{"op":"malloc","addr":"0x0","size":-0}`, true},
		{`{"op":"read","addr":"0x10","size":null,"var":null,"space":null,"site":null,"t":null,"thread":null}`, true},
		{`{"op":"end","t":-9223372036854775808,"thread":42}`, true},
		{`{"op":"fn_enter","slots":2147483647}`, true},
		{`{"op":"end","x":{"y":[1,"z",null]},"addr":null,"fields":[]}`, true},
		{`{"op":"free","addr":"0x10","size":8,"name":"n","fields":["0x1"]}`, true},
	} {
		text := plainHeader + "\n" + tt.event + "\n"
		_, _, _, readErr := readAll(strings.NewReader(text))
		schemaErr := validate(s.event, []byte(tt.event))
		if (readErr == nil) != tt.ok || (schemaErr == nil) != tt.ok {
			t.Errorf("%s: Reader says %v, schema says %v; want both ok=%v", tt.event, readErr, schemaErr, tt.ok)
		}
	}
	for _, tt := range []struct {
		header string // a stream's header line, or a whole document
		ok     bool
	}{
		{`{"version":1}`, false},
		{`{"format":"tlcheck-trace"}`, false},
		{`{"format":"tlcheck","version":1}`, false},
		{`{"format":"tlcheck-trace","version":2}`, false},
		{`{"format":"tlcheck-trace","version":"1"}`, false},
		{`{"format":"tlcheck-trace","version":1,"effects":"yes"}`, false},
		{`{"format":"tlcheck-trace","version":1,"source":7}`, false},
		{`{"format":"tlcheck-trace","version":1,"events":{}}`, false},
		{`{"format":"tlcheck-trace","version":1,"events":[{"op":"free"}]}`, false},
		{`{"events":[],"version":1}`, false},
		{`[]`, false},

		{`{"format":"tlcheck-trace","version":1.0,"effects":null,"source":null,"x":[]}`, true},
		{`{"format":"tlcheck-trace","version":1,"effects":true,"source":"rt"}`, true},
		{`{"format":"tlcheck-trace","version":1,"events":[]}`, true},
		{`{"events":[{"op":"end"}],"version":1,"format":"tlcheck-trace"}`, true},
	} {
		_, _, _, readErr := readAll(strings.NewReader(tt.header))
		sch := s.header
		if strings.Contains(tt.header, `"events"`) {
			sch = s.document
		}
		schemaErr := validate(sch, []byte(tt.header))
		if (readErr == nil) != tt.ok || (schemaErr == nil) != tt.ok {
			t.Errorf("%s: Reader says %v, schema says %v; want both ok=%v", tt.header, readErr, schemaErr, tt.ok)
		}
	}
}

// TestSchemaWriter: whatever the writer writes, the schema accepts.
func TestSchemaWriter(t *testing.T) {
	s := loadSchemas(t)
	rapid.Check(t, func(t *rapid.T) {
		ev := genEvent(t)
		line := AppendEvent(nil, &ev)
		if err := validate(s.event, line); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	})
}
