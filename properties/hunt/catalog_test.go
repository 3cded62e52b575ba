package hunt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	_ "github.com/tlcheck/tlcheck/impl/autograd" // their faults join the catalog
	_ "github.com/tlcheck/tlcheck/impl/gpu"
)

func TestWriteCatalogText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCatalog(&b, false); err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n\n")
	cat := impl.Catalog()
	if len(blocks) != len(cat) {
		t.Fatalf("%d blocks, want one per fault (%d)", len(blocks), len(cat))
	}
	for i, blk := range blocks {
		lines := strings.Split(blk, "\n")
		if lines[0] != string(cat[i].Name) {
			t.Errorf("block %d starts %q, want the name %q", i, lines[0], cat[i].Name)
		}
		for _, label := range []string{"  summary: ", "  bug:     ", "  trigger: ", "  engine:  "} {
			if !strings.Contains(blk, "\n"+label) {
				t.Errorf("block %s lacks %q", cat[i].Name, label)
			}
		}
		if strings.Contains(blk, "\n  also:    ") != (len(cat[i].Also) > 0) {
			t.Errorf("block %s: an also line where the row has %v", cat[i].Name, cat[i].Also)
		}
		for _, l := range lines {
			if len(l) > 80 && strings.Contains(strings.TrimSpace(l), " ") {
				t.Errorf("line longer than 80 columns: %q", l)
			}
		}
	}
}

func TestWriteCatalogJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCatalog(&b, true); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Faults []CatalogFault `json:"faults"`
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	cat := impl.Catalog()
	if len(got.Faults) != len(cat) {
		t.Fatalf("%d faults, want %d", len(got.Faults), len(cat))
	}
	for i, f := range got.Faults {
		c := cat[i]
		if f != (CatalogFault{string(c.Name), c.Summary, c.Bug, c.Trigger, c.Engine, strings.Join(c.Also, ",")}) {
			t.Errorf("fault %d = %+v, want the catalog's %+v", i, f, c)
		}
	}
}

// TestWriteField: words wrap at 80 columns, under the first.
func TestWriteField(t *testing.T) {
	var b bytes.Buffer
	writeField(&b, "bug", strings.Repeat("word ", 30))
	want := "  bug:     " + strings.TrimSpace(strings.Repeat("word ", 14)) + "\n" +
		"           " + strings.TrimSpace(strings.Repeat("word ", 14)) + "\n" +
		"           " + strings.TrimSpace(strings.Repeat("word ", 2)) + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestFuzzFault: fuzz takes the program and source engines' faults and
// refuses the others, listing what it takes.
func TestFuzzFault(t *testing.T) {
	for _, f := range impl.Catalog() {
		info, err := FuzzFault(string(f.Name))
		takes := f.Engine == impl.EngineProgram || f.Engine == impl.EngineSource
		switch {
		case takes && (err != nil || info.Name != f.Name):
			t.Errorf("%s (%s): %+v, %v; want its row", f.Name, f.Engine, info, err)
		case !takes && (err == nil || !strings.Contains(err.Error(), "is hunted by the "+f.Engine+" engine")):
			t.Errorf("%s (%s): error %v, want a refusal naming its engine", f.Name, f.Engine, err)
		case !takes && !strings.Contains(err.Error(), "\n  "+string(impl.Catalog()[0].Name)+"\n"):
			t.Errorf("%s: refusal %q lists not the faults fuzz takes", f.Name, err)
		}
	}
	_, err := FuzzFault("no-such-fault")
	if err == nil || !strings.HasPrefix(err.Error(), `unknown fault "no-such-fault"`) || strings.Count(err.Error(), "\n") != len(impl.Catalog())+1 {
		t.Errorf("unknown fault: %v, want the catalog listed a line each", err)
	}
}
