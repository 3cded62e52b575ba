package traces

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Where the op table meets the prose: FORMAT.md's layer tables, the
// package comment's summary and schema.json's enum of ops, read for
// TestOpTable and held to the table by TestPackageDocOps.

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

// TestPackageDocOps holds the summary of ops in doc.go to the table: each
// op in its layer's lines, with its required fields in order and its
// optional ones in brackets.
func TestPackageDocOps(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	layerLine := regexp.MustCompile(`^//\tlayer ([0-9]+), [^:]*:(.*)$`)
	type docItem struct {
		layer              int
		required, optional []string
	}
	items := map[string]docItem{}
	layer := 0
	for line := range strings.SplitSeq(string(src), "\n") {
		text := ""
		if m := layerLine.FindStringSubmatch(line); m != nil {
			fmt.Sscan(m[1], &layer)
			text = m[2]
		} else if rest, ok := strings.CutPrefix(line, "//\t "); ok && layer > 0 {
			text = rest // a layer's continuation line
		} else {
			layer = 0
			continue
		}
		for item := range strings.SplitSeq(text, "·") {
			tokens := strings.Fields(item)
			if len(tokens) == 0 {
				continue
			}
			d := docItem{layer: layer, required: []string{}, optional: []string{}}
			for _, tok := range tokens[1:] {
				switch {
				case strings.HasPrefix(tok, "["):
					d.optional = append(d.optional, strings.Trim(tok, "[]"))
				case strings.HasPrefix(tok, `"`):
					// a value, as in [space "heap"|"device"]
				default:
					d.required = append(d.required, tok)
				}
			}
			for name := range strings.SplitSeq(tokens[0], "/") {
				if _, dup := items[name]; dup {
					t.Errorf("op %s: doc.go's summary lists it twice", name)
				}
				items[name] = d
			}
		}
	}
	for _, op := range Ops() {
		row := &opRows[op]
		d, ok := items[row.name]
		switch {
		case !ok:
			t.Errorf("op %s: not in the summary of ops in doc.go (the layer %d line)", op, row.layer)
		case d.layer != row.layer:
			t.Errorf("op %s: on doc.go's layer %d line; ops.go says layer %d", op, d.layer, row.layer)
		case !slices.Equal(d.required, fieldNamesOf(row.required)) || !slices.Equal(d.optional, fieldNamesOf(row.optional)):
			t.Errorf("op %s: doc.go gives fields %q [%q]; ops.go has %q [%q]", op,
				d.required, d.optional, fieldNamesOf(row.required), fieldNamesOf(row.optional))
		}
	}
	for name := range items {
		if _, ok := ParseOp(name); !ok {
			t.Errorf("op %s: doc.go's summary lists it, but ops.go has no row for it", name)
		}
	}
}
