package traces

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Where the op table meets the prose: FORMAT.md's layer tables and
// schema.json's enum of ops, read for TestOpTable. (The package comment's
// summary is written from the table: see generated_test.go.)

// docOp is an op as a layer table of FORMAT.md lists it.
type docOp struct {
	layer              int
	required, optional []string
}

var (
	layerHeading = regexp.MustCompile("^### Layer ([0-9]+)")
	docField     = regexp.MustCompile("(\\[?)`([a-z_]+)`")
)

// formatOps reads the ops from the tables of FORMAT.md's layer sections:
// each row's first cell names its ops, the second their fields, optional
// ones in brackets ("`addr`, `size` [`kind`]").
func formatOps(t *testing.T) map[string]docOp {
	t.Helper()
	md, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]docOp{}
	layer := 0
	for line := range strings.SplitSeq(string(md), "\n") {
		if m := layerHeading.FindStringSubmatch(line); m != nil {
			fmt.Sscan(m[1], &layer)
			continue
		}
		if strings.HasPrefix(line, "#") {
			layer = 0
			continue
		}
		if layer == 0 || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Errorf("FORMAT.md layer %d: a table row with fewer than 3 cells: %s", layer, line)
			continue
		}
		d := docOp{layer: layer, required: []string{}, optional: []string{}}
		for _, m := range docField.FindAllStringSubmatch(cells[2], -1) {
			if m[1] == "[" {
				d.optional = append(d.optional, m[2])
			} else {
				d.required = append(d.required, m[2])
			}
		}
		for _, m := range docField.FindAllStringSubmatch(cells[1], -1) {
			if _, dup := ops[m[2]]; dup {
				t.Errorf("op %s: FORMAT.md's layer tables list it twice", m[2])
			}
			ops[m[2]] = d
		}
	}
	if len(ops) == 0 {
		t.Fatal("FORMAT.md: no op found in the tables of its \"### Layer N\" sections")
	}
	return ops
}

// schemaEnum returns the op names schema.json's event accepts.
func schemaEnum(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			Event struct {
				Properties struct {
					Op struct {
						Enum []string `json:"enum"`
					} `json:"op"`
				} `json:"properties"`
			} `json:"event"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	return doc.Defs.Event.Properties.Op.Enum
}
