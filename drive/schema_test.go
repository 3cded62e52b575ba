package drive_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// protocolSchemas compiles protocol.schema.json (with the trace schema it
// refers to, loaded from the repository: no network) and returns its defs.
func protocolSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	ids := map[string]string{}
	for _, path := range []string{filepath.Join("..", "traces", "schema.json"), "protocol.schema.json"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		id := doc.(map[string]any)["$id"].(string)
		ids[path] = id
		if err := c.AddResource(id, doc); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, def := range []string{"hello", "reset", "call", "tensor_call", "answer"} {
		s, err := c.Compile(ids["protocol.schema.json"] + "#/$defs/" + def)
		if err != nil {
			t.Fatalf("protocol.schema.json#/$defs/%s: %v", def, err)
		}
		out[def] = s
	}
	return out
}

// checkCall validates a call line of PROTOCOL.md, of layers 2 and 3 or of
// layer 5, by the schema and the parser.
func checkCall(t *testing.T, s map[string]*jsonschema.Schema, what, line string) (layer5 bool) {
	t.Helper()
	var probe struct{ Op string }
	json.Unmarshal([]byte(line), &probe)
	if _, ok := traces.ParseOp(probe.Op); ok && probe.Op != "free" {
		validate(t, s["call"], what, []byte(line))
		if _, _, _, err := drive.ParseCall([]byte(line)); err != nil {
			t.Errorf("ParseCall(%s): %v", line, err)
		}
		return false
	}
	validate(t, s["tensor_call"], what, []byte(line))
	if _, _, _, err := drive.ParseTensorCall([]byte(line)); err != nil {
		t.Errorf("ParseTensorCall(%s): %v", line, err)
	}
	return true
}

func validate(t *testing.T, s *jsonschema.Schema, what string, line []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err == nil {
		err = s.Validate(v)
	}
	if err != nil {
		t.Errorf("%s %s: %v", what, line, err)
	}
}

// TestSchemaAndDoc: the lines PROTOCOL.md shows, and a real session of the
// Go driver, are valid by the schema and by the parsers; and the schema's
// lists of calls and kinds are the code's.
func TestSchemaAndDoc(t *testing.T) {
	s := protocolSchemas(t)
	doc, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	n, tensorLines := 0, 0
	for _, line := range strings.Split(string(doc), "\n") {
		dir, msg, ok := strings.Cut(line, " ")
		if !ok || (dir != "<" && dir != ">") || !strings.HasPrefix(msg, "{") {
			if strings.HasPrefix(line, `{"op":`) { // a calls file
				if checkCall(t, s, "calls file line", line) {
					tensorLines++
				}
				n++
			}
			continue
		}
		n++
		switch {
		case strings.Contains(msg, `"protocol"`):
			validate(t, s["hello"], "hello", []byte(msg))
		case dir == "<":
			validate(t, s["answer"], "answer", []byte(msg))
		case strings.Contains(msg, `"reset"`):
			validate(t, s["reset"], "reset", []byte(msg))
		default:
			if checkCall(t, s, "call", msg) {
				tensorLines++
			}
		}
	}
	if tensorLines < 10 {
		t.Errorf("found %d layer-5 calls in PROTOCOL.md; the examples moved?", tensorLines)
	}
	if n < 15 {
		t.Errorf("found %d protocol lines in PROTOCOL.md; the examples moved?", n)
	}

	// A session of the Go driver, layer 3 included.
	var in bytes.Buffer
	p, _ := flat.ParseProgram("scope_enter\nalloc 16\nstruct_init 32 [live[0] null]\nrelease dead[0]\nfn_enter fn [1 0]\narena_get 16\nread var[0]\nfn_exit\n")
	_, calls := drive.Lower(p, nil)
	in.WriteString(`{"id":1,"op":"reset"}` + "\n")
	for i := range calls {
		line := calls[i].AppendJSON(nil)
		validate(t, s["call"], "calls file line", line)
		line = append([]byte(`{"id":`+strconv.Itoa(i+2)+","), line[1:]...)
		validate(t, s["call"], "call", line)
		in.Write(line)
		in.WriteByte('\n')
	}
	var out bytes.Buffer
	if err := impldriver.Serve(&in, &out, impl.Config{}); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	sc.Scan()
	validate(t, s["hello"], "hello", sc.Bytes())
	answers := 0
	for sc.Scan() {
		validate(t, s["answer"], "answer", sc.Bytes())
		answers++
	}
	if answers != len(calls)+1 {
		t.Errorf("%d answers to %d calls and a reset", answers, len(calls))
	}

	schema, err := os.ReadFile("protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Defs struct {
			Call struct {
				Properties struct {
					Op struct{ Enum []string }
				}
			}
			TensorCall struct {
				Properties struct {
					Op struct{ Enum []string }
				}
			} `json:"tensor_call"`
			Answer struct {
				Properties struct {
					Kinds struct{ Items struct{ Enum []string } }
				}
			}
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schema, &raw); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, op := range append(drive.CallOps(2), drive.CallOps(3)...) {
		ops = append(ops, op.String())
	}
	if got := raw.Defs.Call.Properties.Op.Enum; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(ops))) {
		t.Errorf("the schema's calls %v, the code's %v", got, ops)
	}
	var tops []string
	for _, op := range drive.TensorOps() {
		tops = append(tops, string(op))
	}
	if got := raw.Defs.TensorCall.Properties.Op.Enum; !slices.Equal(got, tops) {
		t.Errorf("the schema's layer-5 calls %v, the code's %v", got, tops)
	}
	var kinds []string
	for _, k := range traces.Kinds() {
		kinds = append(kinds, string(k))
	}
	if got := raw.Defs.Answer.Properties.Kinds.Items.Enum; !slices.Equal(got, kinds) {
		t.Errorf("the schema's kinds %v, the code's %v", got, kinds)
	}
}
