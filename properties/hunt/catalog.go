package hunt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/impl"
)

// The catalog as `tlcheck faults` lists it, and the faults `tlcheck fuzz
// --fault` may switch on: those of the two engines whose programs fuzz
// generates (impl.EngineProgram and impl.EngineSource).

// CatalogFault is one fault of the catalog in WriteCatalog's JSON.
type CatalogFault struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	Bug     string `json:"bug"`
	Trigger string `json:"trigger"`
	Engine  string `json:"engine"`
	Also    string `json:"also,omitempty"` // the other engines, comma-separated
}

// WriteCatalog writes impl.Catalog to w: with asJSON one indented object
// {"faults":[CatalogFault...]}, else a block per fault, blank-line
// separated, of its name and its labelled fields wrapped at 80 columns.
// The error is w's.
func WriteCatalog(w io.Writer, asJSON bool) error {
	cat := impl.Catalog()
	if asJSON {
		out := struct {
			Faults []CatalogFault `json:"faults"`
		}{Faults: make([]CatalogFault, len(cat))}
		for i, f := range cat {
			out.Faults[i] = CatalogFault{string(f.Name), f.Summary, f.Bug, f.Trigger, f.Engine, strings.Join(f.Also, ",")}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	var b bytes.Buffer
	for i, f := range cat {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintln(&b, f.Name)
		writeField(&b, "summary", f.Summary)
		writeField(&b, "bug", f.Bug)
		writeField(&b, "trigger", f.Trigger)
		writeField(&b, "engine", f.Engine)
		if len(f.Also) > 0 {
			writeField(&b, "also", strings.Join(f.Also, ", "))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeField writes "  label:  text", the text wrapped at 80 columns under
// itself.
func writeField(w io.Writer, label, text string) {
	const width, indent = 80, 11
	line := fmt.Sprintf("  %-*s", indent-2, label+":")
	col := indent
	for i, word := range strings.Fields(text) {
		if i > 0 && col+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, col = strings.Repeat(" ", indent), indent
		} else if i > 0 {
			line += " "
			col++
		}
		line += word
		col += len(word)
	}
	fmt.Fprintln(w, line)
}

// FuzzFault returns the catalog's row for the fault `tlcheck fuzz --fault
// name` switches on. An unknown name, or a fault that another engine
// hunts (pool, registry, autograd: selftest runs those), is an error that
// says so and lists, one an indented line, the faults fuzz could take
// instead: every fault with its engine for an unknown name, the program
// and source engines' for a refused one.
func FuzzFault(name string) (impl.FaultInfo, error) {
	info, ok := impl.LookupFault(name)
	if !ok {
		var b strings.Builder
		for _, f := range impl.Catalog() {
			fmt.Fprintf(&b, "  %-40s %s\n", f.Name, f.Engine)
		}
		return info, fmt.Errorf("unknown fault %q; the catalog has (fuzz takes the %s and %s engines'):\n%s",
			name, impl.EngineProgram, impl.EngineSource, b.String())
	}
	if info.Engine == impl.EngineProgram || info.Engine == impl.EngineSource {
		return info, nil
	}
	var b strings.Builder
	for _, f := range impl.Catalog() {
		if f.Engine == impl.EngineProgram || f.Engine == impl.EngineSource {
			fmt.Fprintf(&b, "  %s\n", f.Name)
		}
	}
	return info, fmt.Errorf("fault %s is hunted by the %s engine, not by generated programs (tlcheck selftest runs it); fuzz takes the %s and %s engines' faults:\n%s",
		info.Name, info.Engine, impl.EngineProgram, impl.EngineSource, b.String())
}
