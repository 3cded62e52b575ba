package autograd_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/traces"
)

// reportDir is where the report's files live, from this package.
var reportDir = filepath.Join("..", "..", "reports")

// TestAutogradReport: reports/autograd.md, its CSV files and its plot are
// what the training loop measures. The test renders them from the curves
// and fails if a file differs (a stale report, or one edited by hand);
// WRITE_REPORT=1 writes them instead, each atomically. Only figures that
// repeat exactly are here: times are in reports/benchmarks.md.
func TestAutogradReport(t *testing.T) {
	good, _ := liveCurve(t, liveEpochs)
	bad, _ := liveCurve(t, liveEpochs, autograd.FaultAutogradStructRetain)
	sgood := snapCurve(t, snapEpochs)
	sbad := snapCurve(t, snapEpochs, autograd.FaultAutogradSnapshotTableNeverCleared)
	files := []struct{ name, data string }{
		{"autograd.md", renderAutograd(good, bad, sgood, sbad, callsPerEpoch(t))},
		{"autograd-epochs.csv", curvesCSV("epoch,correct_live_bytes,struct_retain_live_bytes", good, bad)},
		{"autograd-epochs.svg", plot(good, bad)},
		{"autograd-snapshots.csv", curvesCSV("epoch,correct_snapshot_bytes,never_cleared_snapshot_bytes", sgood, sbad)},
	}
	write := os.Getenv("WRITE_REPORT") != ""
	for _, f := range files {
		path := filepath.Join(reportDir, f.name)
		if write {
			if err := atomicfile.Replace(path, []byte(f.data)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v: write the report with WRITE_REPORT=1 go test ./impl/autograd -run AutogradReport", err)
		}
		if !bytes.Equal(old, []byte(f.data)) {
			t.Errorf("reports/%s is not what the training loop measures now (stale, or edited by hand): "+
				"regenerate it with WRITE_REPORT=1 go test ./impl/autograd -run AutogradReport", f.name)
		}
	}
}

// callsPerEpoch counts the runtime calls of one epoch after the first,
// by op, in the order of traces' op table.
func callsPerEpoch(t *testing.T) string {
	counts := map[traces.Op]int{}
	counting := false
	tr, err := newTrainer(func(ev traces.Event) {
		if counting {
			counts[ev.Op]++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		counting = i == 1
		if _, err := tr.epoch(0.1); err != nil {
			t.Fatal(err)
		}
	}
	var parts []string
	for _, op := range traces.Ops() {
		if n := counts[op]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d `%s`", n, op))
		}
	}
	return strings.Join(parts, ", ")
}

func curvesCSV(header string, a, b []uint64) string {
	var s strings.Builder
	s.WriteString(header + "\n")
	for i := range a {
		fmt.Fprintf(&s, "%d,%d,%d\n", i+1, a[i], b[i])
	}
	return s.String()
}

// renderAutograd writes reports/autograd.md from the curves: live bytes
// per epoch, correct and over-retaining; snapshot bytes per epoch, correct
// and never cleared; and the runtime calls of one epoch.
func renderAutograd(good, bad, sgood, sbad []uint64, calls string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	last := len(good) - 1
	per := bad[1] - bad[0]
	p("# Autograd: live bytes per training epoch")
	p("")
	p("Written by `WRITE_REPORT=1 go test ./impl/autograd -run AutogradReport`;")
	p("`go test` fails when this file and its CSV and SVG files are not what the")
	p("loop measures. Regenerate them, never edit them.")
	p("")
	p("The training loop of `impl/autograd/train_test.go` (the seed's N-Queens loop")
	p("in small: a 4x4 weight and a bias, a loss built each epoch, backward, an SGD")
	p("update under NoGrad, ClearGrads, the epoch's scope closed) runs %s epochs", group(len(good)))
	p("twice; live bytes are counted from the runtime's trace (alloc minus free),")
	p("not from the engine's books.")
	p("")
	p("| engine | live bytes after epoch 1 | after epoch %s | growth |", group(len(good)))
	p("|---|---|---|---|")
	p("| correct | %s | %s | %s |", group(int(good[0])), group(int(good[last])), flat(good))
	p("| `autograd-struct-retain` (TensorLogic 4419a90) | %s | %s | %s |", group(int(bad[0])), group(int(bad[last])), linear(bad, per))
	p("")
	p("The correct engine's bytes are the parameters and the data, which live")
	p("across epochs; the fault's growth is one epoch's graph tensors, which the")
	p("struct-style retain keeps. `TestEpochLiveBytes` fails if the correct curve")
	p("moves by one byte or the faulty one is not exactly linear.")
	p("`autograd-epochs.csv` holds both curves and `autograd-epochs.svg` plots them:")
	p("")
	p("![live bytes per epoch](autograd-epochs.svg)")
	p("")
	p("## Snapshot bytes per epoch (checkpoints)")
	p("")
	p("The same loop with checkpoints on (`autograd.Config{Checkpoint: true}`)")
	p("damps tanh's activation in place once the loss is built; tanh saved it,")
	p("so every epoch takes one snapshot before the write and backward restores")
	p("the activation from it. Snapshot bytes are counted from the trace (the")
	p("objects named by `snapshot` events, until their `free`), over %s epochs:", group(len(sgood)))
	p("")
	p("| engine | snapshot bytes live after epoch 1 | after epoch %s | growth |", group(len(sgood)))
	p("|---|---|---|---|")
	p("| correct | %s | %s | %s |", group(int(sgood[0])), group(int(sgood[len(sgood)-1])), flat(sgood))
	p("| `autograd-snapshot-table-never-cleared` (cgadimpl's global tables) | %s | %s | %s |",
		group(int(sbad[0])), group(int(sbad[len(sbad)-1])), linear(sbad, sbad[0]))
	p("")
	p("`TestEpochSnapshotBytes` fails if one snapshot byte of the correct engine")
	p("outlives its epoch or the faulty curve is not exactly linear; the model")
	p("reports each kept snapshot as a `leak` at `end` naming the saved tensor it")
	p("was taken for. `autograd-snapshots.csv` holds both curves.")
	p("")
	p("## Runtime calls of one epoch")
	p("")
	p("Recorded by the runtime in the second epoch:")
	p("%s.", calls)
	p("")
	p("Time per epoch, backward time over forward time and Go allocations per")
	p("step are measured by `BenchmarkTrainingStep`, whose figures are in")
	p("`reports/benchmarks.md` (`go run ./reports/gen -only benches`).")
	return b.String()
}

// flat says how a curve that must not move moved.
func flat(v []uint64) string {
	for i := range v {
		if v[i] != v[0] {
			return fmt.Sprintf("moves at epoch %d", i+1)
		}
	}
	return "none: flat from epoch 1"
}

// linear says how a curve that grows by per every epoch grew.
func linear(v []uint64, per uint64) string {
	for i := 1; i < len(v); i++ {
		if v[i]-v[i-1] != per {
			return fmt.Sprintf("not linear at epoch %d", i+1)
		}
	}
	return fmt.Sprintf("+%s bytes every epoch: linear", group(int(per)))
}

// group writes n with thousands separated by commas.
func group(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
