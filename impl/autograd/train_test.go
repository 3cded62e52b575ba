package autograd_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// liveBytes follows a runtime's trace: bytes allocated and not yet
// freed. It reads the recorded events only, not the engine's books.
type liveBytes struct {
	sizes map[traces.Addr]uint64
	live  uint64
}

func (l *liveBytes) record(ev traces.Event) {
	switch ev.Op {
	case traces.OpAlloc:
		l.sizes[ev.Addr] = ev.Size
		l.live += ev.Size
	case traces.OpFree:
		l.live -= l.sizes[ev.Addr]
		delete(l.sizes, ev.Addr)
	}
}

// trainer is the seed's training loop in small (its N-Queens solver:
// parameters, a loss built each epoch, backward, an update, grads
// cleared): a 4x4 weight and a bias fit tanh(x·W + b) to a target.
type trainer struct {
	e      *autograd.Engine
	ckpt   bool // damp tanh's saved output in place after the loss: a snapshot per epoch
	w, b   *autograd.Tensor
	x, y   *autograd.Tensor
	fwd    time.Duration
	bwd    time.Duration
	timing bool
	// afterBackward, if set, runs after each epoch's backward, before
	// the update and the epoch scope's exit.
	afterBackward func()
}

func newTrainer(rec func(traces.Event), faults ...impl.Fault) (*trainer, error) {
	return newTrainerCfg(rec, autograd.Config{}, faults...)
}

// newTrainerCfg makes a trainer whose engine has cfg; with checkpoints
// the engine's events go to rec too, and each epoch writes a saved tensor
// in place.
func newTrainerCfg(rec func(traces.Event), cfg autograd.Config, faults ...impl.Fault) (*trainer, error) {
	rt := impl.New(impl.Config{Record: rec, Faults: faults})
	if cfg.Checkpoint {
		cfg.Record = rec
	}
	e, err := autograd.New(rt, cfg)
	if err != nil {
		return nil, err
	}
	tr := &trainer{e: e, ckpt: cfg.Checkpoint}
	if err := e.ScopeEnter(); err != nil { // the parameters' scope
		return nil, err
	}
	mk := func(shape []int, req bool, f func(i int) float64) *autograd.Tensor {
		if err != nil {
			return nil
		}
		vals := make([]float64, shape[0]*shape[1])
		for i := range vals {
			vals[i] = f(i)
		}
		var t *autograd.Tensor
		t, err = e.Leaf(shape, vals, req)
		return t
	}
	tr.w = mk([]int{4, 4}, true, func(i int) float64 { return float64(i%5)/10 - 0.2 })
	tr.b = mk([]int{1, 4}, true, func(int) float64 { return 0 })
	tr.x = mk([]int{1, 4}, false, func(i int) float64 { return float64(i) / 4 })
	tr.y = mk([]int{1, 4}, false, func(i int) float64 { return 0.5 - float64(i)/8 })
	return tr, err
}

// epoch runs one training step in a scope of its own and returns the loss.
func (tr *trainer) epoch(lr float64) (float64, error) {
	e := tr.e
	if err := e.ScopeEnter(); err != nil {
		return 0, err
	}
	var err error
	do := func(t *autograd.Tensor, e error) *autograd.Tensor {
		if err == nil {
			err = e
		}
		return t
	}
	t0 := time.Now()
	h := do(do(tr.x.Matmul(tr.w)).Add(tr.b))
	a := do(h.Tanh())
	d := do(a.Sub(tr.y))
	loss := do(do(d.Pow(2)).Sum())
	if err == nil && tr.ckpt {
		// The activation, which tanh saved, is damped in place once the
		// loss is built: backward restores it from the snapshot.
		err = a.MulInPlace(0.9)
	}
	if err != nil {
		return 0, err
	}
	v, err := loss.Item()
	t1 := time.Now()
	if err == nil {
		err = loss.Backward(false)
	}
	t2 := time.Now()
	tr.fwd += t1.Sub(t0)
	tr.bwd += t2.Sub(t1)
	if err != nil {
		return 0, err
	}
	if tr.afterBackward != nil {
		tr.afterBackward()
	}
	err = e.NoGrad(func() error {
		for _, p := range []*autograd.Tensor{tr.w, tr.b} {
			if err := p.AddInPlace(p.Grad(), -lr); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = e.ClearGrads()
	}
	if err == nil {
		err = e.ScopeExit()
	}
	return v, err
}

// liveCurve runs the training loop for epochs with faults on and returns
// the live bytes after each epoch, counted from the trace, and the last
// epoch's loss.
func liveCurve(t testing.TB, epochs int, faults ...impl.Fault) ([]uint64, float64) {
	t.Helper()
	out, _, loss := liveCurveCfg(t, epochs, autograd.Config{}, faults...)
	return out, loss
}

// liveCurveCfg is liveCurve on an engine configured by cfg; it also
// returns the live bytes right after each epoch's backward.
func liveCurveCfg(t testing.TB, epochs int, cfg autograd.Config, faults ...impl.Fault) (end, afterBackward []uint64, loss float64) {
	t.Helper()
	l := &liveBytes{sizes: map[traces.Addr]uint64{}}
	tr, err := newTrainerCfg(l.record, cfg, faults...)
	if err != nil {
		t.Fatal(err)
	}
	end, afterBackward = make([]uint64, epochs), make([]uint64, epochs)
	for i := range end {
		tr.afterBackward = func() { afterBackward[i] = l.live }
		if loss, err = tr.epoch(0.1); err != nil {
			t.Fatalf("faults %v: epoch %d: %v", faults, i+1, err)
		}
		end[i] = l.live
	}
	return end, afterBackward, loss
}

// Epochs of the report's curves (reports/autograd.md).
const (
	liveEpochs = 1000
	snapEpochs = 200
)

// TestEpochLiveBytes: live bytes after each of 1,000 epochs are flat
// after the first epoch; under the over-retention fault of 4419a90 they
// grow by the same amount every epoch.
func TestEpochLiveBytes(t *testing.T) {
	good, loss := liveCurve(t, liveEpochs)
	bad, _ := liveCurve(t, liveEpochs, autograd.FaultAutogradStructRetain)
	if loss > 1e-3 {
		t.Errorf("loss after %d epochs %g: the loop does not train", liveEpochs, loss)
	}
	for i := 1; i < liveEpochs; i++ {
		if good[i] != good[0] {
			t.Fatalf("correct engine: %d live bytes after epoch %d, %d after epoch 1", good[i], i+1, good[0])
		}
	}
	per := bad[1] - bad[0]
	for i := 1; i < liveEpochs; i++ {
		if bad[i]-bad[i-1] != per || per == 0 {
			t.Fatalf("over-retention: growth %d at epoch %d, want %d every epoch (linear)", bad[i]-bad[i-1], i+1, per)
		}
	}
	t.Logf("correct: %d live bytes after every epoch; over-retention: +%d bytes per epoch, %d after %d", good[0], per, bad[liveEpochs-1], liveEpochs)
}

// TestEpochLiveBytesLifetimes: the same loop under both lifetimes trains
// alike (the same loss to the last bit) and leaves the same live bytes
// after every epoch, flat; right after backward, PyTorch's lifetime holds
// the epoch's intermediates and nodes until the epoch's scope exits (its
// locals), where TensorLogic's freed them at backward. Under the
// over-retention fault both grow by the same amount every epoch.
func TestEpochLiveBytesLifetimes(t *testing.T) {
	const epochs = 200
	tl, tlBack, tlLoss := liveCurveCfg(t, epochs, autograd.Config{})
	pt, ptBack, ptLoss := liveCurveCfg(t, epochs, autograd.Config{Lifetime: autograd.LifetimePyTorch})
	bad, _, _ := liveCurveCfg(t, epochs, autograd.Config{Lifetime: autograd.LifetimePyTorch}, autograd.FaultAutogradStructRetain)
	if tlLoss != ptLoss {
		t.Errorf("loss after %d epochs: %g under TensorLogic's lifetime, %g under PyTorch's", epochs, tlLoss, ptLoss)
	}
	for i := range epochs {
		if tl[i] != tl[0] || pt[i] != tl[0] {
			t.Fatalf("epoch %d: %d live bytes (TensorLogic), %d (PyTorch), want %d after every epoch", i+1, tl[i], pt[i], tl[0])
		}
		if ptBack[i] <= tlBack[i] || ptBack[i] != ptBack[0] || tlBack[i] != tlBack[0] {
			t.Fatalf("epoch %d, after backward: %d live bytes (TensorLogic), %d (PyTorch), want flat and PyTorch's above", i+1, tlBack[i], ptBack[i])
		}
	}
	per := bad[1] - bad[0]
	for i := 1; i < epochs; i++ {
		if bad[i]-bad[i-1] != per || per == 0 {
			t.Fatalf("over-retention under PyTorch's lifetime: growth %d at epoch %d, want %d every epoch (linear)", bad[i]-bad[i-1], i+1, per)
		}
	}
	t.Logf("after every epoch %d live bytes under both lifetimes; right after backward %d (TensorLogic) and %d (PyTorch); over-retention under PyTorch's: +%d bytes per epoch",
		tl[0], tlBack[0], ptBack[0], per)
}

// snapBytes follows a trace's snapshots: bytes of snapshot buffers taken
// and not yet freed.
type snapBytes struct {
	sizes map[traces.Addr]uint64 // every live object's size
	snaps map[traces.Addr]bool   // the live objects that are snapshots
	live  uint64
}

func (l *snapBytes) record(ev traces.Event) {
	switch ev.Op {
	case traces.OpAlloc:
		l.sizes[ev.Addr] = ev.Size
	case traces.OpSnapshot:
		if !l.snaps[ev.Addr] {
			l.snaps[ev.Addr] = true
			l.live += l.sizes[ev.Addr]
		}
	case traces.OpFree:
		if l.snaps[ev.Addr] {
			delete(l.snaps, ev.Addr)
			l.live -= l.sizes[ev.Addr]
		}
		delete(l.sizes, ev.Addr)
	}
}

// snapCurve runs the training loop with checkpoints on for epochs, with
// faults on, and returns the snapshot bytes live after each epoch,
// counted from the trace. Each epoch must take one snapshot.
func snapCurve(t testing.TB, epochs int, faults ...impl.Fault) []uint64 {
	t.Helper()
	l := &snapBytes{sizes: map[traces.Addr]uint64{}, snaps: map[traces.Addr]bool{}}
	taken := 0
	tr, err := newTrainerCfg(func(ev traces.Event) {
		if ev.Op == traces.OpSnapshot {
			taken++
		}
		l.record(ev)
	}, autograd.Config{Checkpoint: true}, faults...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]uint64, epochs)
	for i := range out {
		if _, err := tr.epoch(0.1); err != nil {
			t.Fatalf("faults %v: epoch %d: %v", faults, i+1, err)
		}
		out[i] = l.live
	}
	if taken != epochs {
		t.Fatalf("faults %v: %d snapshots in %d epochs, want one an epoch", faults, taken, epochs)
	}
	return out
}

// TestEpochSnapshotBytes: with checkpoints on, every epoch takes one
// snapshot (tanh's saved output, 32 bytes, damped in place after the
// loss) and restores it at backward. Its bytes are released with the
// graph: none are live after any epoch. Under
// autograd-snapshot-table-never-cleared they grow by the same amount
// every epoch.
func TestEpochSnapshotBytes(t *testing.T) {
	good := snapCurve(t, snapEpochs)
	bad := snapCurve(t, snapEpochs, autograd.FaultAutogradSnapshotTableNeverCleared)
	for i, b := range good {
		if b != 0 {
			t.Fatalf("correct engine: %d snapshot bytes live after epoch %d, want 0", b, i+1)
		}
	}
	for i := range bad {
		if bad[i] != uint64(i+1)*bad[0] || bad[0] == 0 {
			t.Fatalf("never-cleared table: %d snapshot bytes after epoch %d, want %d (linear)", bad[i], i+1, uint64(i+1)*bad[0])
		}
	}
	t.Logf("correct: 0 snapshot bytes live after every epoch; never-cleared table: +%d bytes per epoch, %d after %d", bad[0], bad[snapEpochs-1], snapEpochs)
}

// BenchmarkTrainingStep: one epoch (forward, backward, update, clear);
// reports allocations per step and backward time over forward time.
func BenchmarkTrainingStep(b *testing.B) {
	benchTraining(b, autograd.Config{})
}

// BenchmarkTrainingStepPyTorch is BenchmarkTrainingStep under PyTorch's
// lifetime, whose reference walk runs after every backward and scope exit.
func BenchmarkTrainingStepPyTorch(b *testing.B) {
	benchTraining(b, autograd.Config{Lifetime: autograd.LifetimePyTorch})
}

func benchTraining(b *testing.B, cfg autograd.Config) {
	tr, err := newTrainerCfg(nil, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tr.epoch(0.1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tr.bwd)/float64(tr.fwd), "bwd/fwd")
}

// plot draws both curves of live bytes per epoch as an SVG line chart.
func plot(good, bad []uint64) string {
	const w, h, p = 640, 320, 50
	top := max(bad[len(bad)-1], good[0], 1)
	line := func(v []uint64) string {
		var b strings.Builder
		for i := 0; i < len(v); i += 10 {
			x := p + float64(w-2*p)*float64(i)/float64(len(v)-1)
			y := h - p - float64(h-2*p)*float64(v[i])/float64(top)
			fmt.Fprintf(&b, "%.1f,%.1f ", x, y)
		}
		return b.String()
	}
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%[1]d" height="%[2]d" font-family="sans-serif" font-size="12">
<rect width="%[1]d" height="%[2]d" fill="white"/>
<line x1="%[3]d" y1="%[4]d" x2="%[5]d" y2="%[4]d" stroke="black"/>
<line x1="%[3]d" y1="%[3]d" x2="%[3]d" y2="%[4]d" stroke="black"/>
<text x="%[6]d" y="%[7]d" text-anchor="middle">epoch (1 to %[8]d)</text>
<text x="10" y="%[9]d">live bytes (0 to %[10]d)</text>
<polyline fill="none" stroke="crimson" stroke-width="2" points="%[11]s"/>
<polyline fill="none" stroke="seagreen" stroke-width="2" points="%[12]s"/>
<text x="%[13]d" y="%[14]d" fill="crimson">autograd-struct-retain (4419a90): +%[15]d bytes/epoch</text>
<text x="%[13]d" y="%[16]d" fill="seagreen">correct: %[17]d bytes, flat</text>
</svg>
`, w, h, p, h-p, w-p, w/2, h-15, len(good), p-10, top, line(bad), line(good), w-p-300, p+10, bad[1]-bad[0], h-p-10, good[0])
}
