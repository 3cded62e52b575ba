package snapgen

import (
	"errors"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// Loop is the kind of training loop a snapshot records.
type Loop int

const (
	// Train is a normal loop: forward, cross_entropy, backward, AdamW
	// step, zero_grad; the activations are freed by backward, the
	// gradients by zero_grad, and the previous step's input and loss when
	// the next step rebinds their names. AdamW makes its state at the
	// first step and keeps it: not a leak.
	Train Loop = iota
	// KeepLoss is Train that appends each step's loss to a list
	// (losses.append(loss) where loss.item() was meant): one block of
	// the scalar loss a step, made by cross_entropy, is never freed.
	KeepLoss
	// KeepGraph is an evaluation loop without torch.no_grad() and
	// without backward that keeps each step's output: the output holds
	// its graph, and the graph every activation it saved, so every
	// forward site's blocks pile up.
	KeepGraph
)

var loopNames = [...]string{Train: "train", KeepLoss: "keep-loss", KeepGraph: "keep-graph"}

func (l Loop) String() string {
	if l < 0 || int(l) >= len(loopNames) {
		return fmt.Sprintf("Loop(%d)", int(l))
	}
	return loopNames[l]
}

// Config sizes a generated loop; a zero field takes its default.
type Config struct {
	Loop   Loop
	Steps  int // iterations (default 12)
	Layers int // hidden Linear+ReLU layers (default 3)
	Batch  int // rows of a batch (default 64)
	Hidden int // width of a layer (default 1024)
	Vocab  int // classes of the output and the loss (default 8192)
	// Seed, when not 0, varies each step's batch rows between Batch/2
	// and Batch, as a loader's last or packed batches do; 0 keeps every
	// step alike.
	Seed uint64
	// Spread, past 1, widens the variation to between Batch/Spread and
	// Batch rows, as sequences of varied lengths do: the activations'
	// sizes vary, and the caching allocator's cache fragments.
	Spread int
	// Capacity is the device's bytes (default 80 GiB). A malloc past it
	// writes an oom entry, and the snapshot is taken there, as a dump
	// from an out-of-memory observer is.
	Capacity uint64
	// MaxSplitSize is max_split_size_mb in bytes (0: unlimited), written
	// in the snapshot's allocator_settings.
	MaxSplitSize uint64
	// RecordFrom is the step at whose start recording began; 0 records
	// from before the model is made. The blocks made before are in the
	// snapshot's segments and not in its trace.
	RecordFrom int
	// MaxEntries keeps only the newest entries, as
	// _record_memory_history(max_entries=N)'s ring buffer does; 0 keeps
	// all.
	MaxEntries int
	// Request, when not 0, is a last torch.empty of that many bytes
	// after the loop, at train.py's line 60 (an OOM to explain when it
	// does not fit).
	Request uint64
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Steps, 12)
	def(&c.Layers, 3)
	def(&c.Batch, 64)
	def(&c.Hidden, 1024)
	def(&c.Vocab, 8192)
	if c.Capacity == 0 {
		c.Capacity = 80 << 30
	}
	return c
}

// Snapshot is a generated snapshot: what torch.cuda.memory._snapshot()
// returns, and what the generator knows of it.
type Snapshot struct {
	Config Config
	// Entries are device 0's trace entries, oldest first.
	Entries []Entry
	// Segments are the allocator's segments when the snapshot was taken.
	Segments []Segment
	// OOM says whether the run ended in an out-of-memory error.
	OOM bool
	// Iterations are the indexes in Entries of each step's first entry
	// (its input's alloc) among the entries kept.
	Iterations []int
	// Annotations are the external_annotations PyTorch records around
	// each optimizer step and zero_grad, as recorded.
	Annotations []Annotation
}

// Annotation is one of external_annotations.
type Annotation struct {
	Stage  string // "START" or "END"
	Name   string // "Optimizer.step#AdamW.step", "Optimizer.zero_grad#AdamW.zero_grad"
	TimeUS int64
}

// Entry is one trace entry, as PyTorch writes it.
type Entry struct {
	Action string
	Addr   uint64 // for oom: the device's free bytes, as PyTorch writes it
	Size   uint64 // requested bytes (alloc, free_*), segment bytes, or for oom the rounded request
	Stream int64
	TimeUS int64
	Frames []Frame
}

// Segment is a segment live at the snapshot, with its blocks in address
// order (free ones included, as PyTorch lists them).
type Segment struct {
	gpu.SegmentInfo
	Frames      []Frame   // where it was reserved
	BlockFrames [][]Frame // each of SegmentInfo.Blocks' frames; nil for a free block
}

// Frame is one Python frame, as stacks="python" records it.
type Frame struct {
	File string
	Line int
	Name string
}

// Generate runs the loop on impl/gpu's caching allocator and returns its
// snapshot.
func Generate(cfg Config) (*Snapshot, error) {
	cfg = cfg.withDefaults()
	if cfg.Loop < Train || cfg.Loop > KeepGraph {
		return nil, fmt.Errorf("snapgen: unknown loop %d", cfg.Loop)
	}
	g := &gen{cfg: cfg, snap: &Snapshot{Config: cfg},
		requested: make(map[traces.Addr]uint64), segSize: make(map[traces.Addr]uint64),
		blockFrames: make(map[traces.Addr][]Frame), segFrames: make(map[traces.Addr][]Frame), rng: cfg.Seed}
	dev := gpu.NewDevice(cfg.Capacity, g.record)
	ca, err := gpu.NewCaching(dev, gpu.CachingOptions{MaxSplitSize: cfg.MaxSplitSize})
	if err != nil {
		return nil, fmt.Errorf("snapgen: %w", err)
	}
	g.ca = ca
	err = g.run()
	var oom *gpu.OutOfMemoryError
	switch {
	case errors.As(err, &oom):
		g.snap.OOM = true
	case err != nil:
		return nil, err
	}
	g.finish()
	return g.snap, nil
}

// WritePickle writes s as PyTorch 2.x's torch.cuda.memory._snapshot()
// pickles it (stacks="python").
func (s *Snapshot) WritePickle(w io.Writer) error {
	return writePickle(w, s.value())
}
