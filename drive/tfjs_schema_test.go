package drive_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tlcheck/tlcheck/drive"
)

// TestTfjsSchema: protocol.schema.json's tfjs_call lists the calls of
// drive.TfjsOps, and every call of generated programs is valid by it.
func TestTfjsSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	f, err := os.Open("protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("protocol.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("protocol.schema.json#/$defs/tfjs_call")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile("protocol.schema.json")
	var schema struct {
		Defs map[string]struct {
			Properties struct {
				Op struct {
					Enum []string `json:"enum"`
				} `json:"op"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, op := range drive.TfjsOps {
		ops = append(ops, string(op))
	}
	if got := schema.Defs["tfjs_call"].Properties.Op.Enum; !slices.Equal(got, ops) {
		t.Errorf("the schema's tfjs calls are %v; drive.TfjsOps %v", got, ops)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		for _, call := range drive.GenerateTfjsProgram(rng, drive.TfjsGenOptions{Known: true}) {
			line := call.String()
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
			if err == nil {
				err = s.Validate(v)
			}
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
		}
	}
}
