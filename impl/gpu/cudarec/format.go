package cudarec

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A File is one recording: one configuration of the allocator, in one
// process on one GPU.
type File struct {
	Name     string    // the file's base name
	Header   *Header   // nil for a configuration check
	Programs []Program // in the order they ran
	Configs  []Config  // configuration checks: does PyTorch take this PYTORCH_CUDA_ALLOC_CONF?
	Complete bool      // the probe ran every program it meant to (an "end" line)
}

// Header says where and how the programs of a File ran.
type Header struct {
	Config       string   `json:"config"`     // the probe's name for the configuration
	AllocConf    string   `json:"alloc_conf"` // PYTORCH_CUDA_ALLOC_CONF, "" for none
	Device       string   `json:"device"`
	Torch        string   `json:"torch"`
	CUDA         string   `json:"cuda"`
	Total        uint64   `json:"total"`          // the device's memory, as cudaMemGetInfo says
	MaxSplitSize int64    `json:"max_split_size"` // memory_stats()'s, in bytes; -1: unlimited
	Keys         []string `json:"keys"`           // the memory_stats() keys of every step's Stats, in order
	SleepMS      float64  `json:"sleep_ms"`       // the sleep kept queued on streams 1 and 2
	Backend      string   `json:"allocator_backend"`
	StatsKeys    []string `json:"stats_keys"` // every key memory_stats() had
}

// Program is one random or named program and what the GPU did at each step.
type Program struct {
	Family       string           `json:"family"` // "named" or "random-FAMILY"
	Name         string           `json:"name"`
	Cap          uint64           `json:"cap"`    // bytes the allocator may reserve (set_per_process_memory_fraction)
	Sleeps       bool             `json:"sleeps"` // streams 1 and 2 were kept busy
	Steps        []Step           `json:"steps"`
	Seconds      float64          `json:"seconds"`
	StartNonzero map[string]int64 `json:"start_nonzero"` // counters not zero before the first step (none expected)
	CleanupLeft  int64            `json:"cleanup_left"`  // bytes still reserved after the program (none expected)
}

// Step is one call and the allocator's state after it.
type Step struct {
	Op     string    `json:"op"` // "malloc", "free", "record", "sync" or "empty"
	Size   uint64    `json:"size"`
	Stream int       `json:"stream"` // malloc: its stream; record and sync: the other stream
	ID     int       `json:"id"`     // malloc, free, record: which malloc of the program
	Ptr    uint64    `json:"ptr"`    // malloc: the tensor's data_ptr
	Error  string    `json:"error"`  // "oom" for torch.OutOfMemoryError, else the exception's type
	Msg    string    `json:"msg"`
	Noop   bool      `json:"noop"`   // free or record of a tensor whose malloc failed
	Before []int     `json:"before"` // streams found idle just before the step: their work is done
	Done   []int     `json:"done"`   // streams whose work finished during the step
	Stats  []*int64  `json:"-"`      // memory_stats() by Header.Keys; nil where torch lacks the key
	Segs   []Segment `json:"-"`      // memory_snapshot(), by address
	Tiling []string  `json:"tiling"` // blocks that did not tile their segment (none expected)

	// On file, a step holds what changed since the step before (all
	// zero, no segment, before the first): memory_stats() as [index,
	// value] pairs, and memory_snapshot() only if it changed.
	DStats [][2]*int64 `json:"dstats"`
	DSegs  *[]Segment  `json:"segs"`
}

// Segment is one segment of memory_snapshot().
type Segment struct {
	Addr       uint64
	Size       uint64
	Stream     int // 0, 1 or 2; -1: a stream the probe did not make
	Small      bool
	Expandable bool
	Blocks     []Block
}

// Block is one block of a segment, in address order.
type Block struct {
	Size      uint64
	State     string // active_allocated, active_pending_free or inactive
	Requested int64  // requested_size
}

// UnmarshalJSON reads the probe's compact form, [addr, size, stream,
// small, expandable, [[size, state, requested], ...]]. Every number is
// below 2^53 (addresses are 47 bits), so float64 holds it exactly.
func (s *Segment) UnmarshalJSON(b []byte) error {
	var raw []any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw) != 6 {
		return fmt.Errorf("a segment has 6 fields, not %d", len(raw))
	}
	var nums [5]float64
	for i := range nums {
		f, ok := raw[i].(float64)
		if !ok || f != float64(int64(f)) || f < -1 || f >= 1<<53 {
			return fmt.Errorf("segment field %d: %v is not a whole number", i, raw[i])
		}
		nums[i] = f
	}
	blocks, ok := raw[5].([]any)
	if !ok {
		return fmt.Errorf("segment field 5: %v is not a list of blocks", raw[5])
	}
	*s = Segment{Addr: uint64(nums[0]), Size: uint64(nums[1]), Stream: int(nums[2]), Small: nums[3] == 1, Expandable: nums[4] == 1,
		Blocks: make([]Block, len(blocks))}
	for i, bl := range blocks {
		f, _ := bl.([]any)
		if len(f) != 3 {
			return fmt.Errorf("a block has 3 fields, not %d", len(f))
		}
		size, ok1 := f[0].(float64)
		state, ok2 := f[1].(string)
		req, ok3 := f[2].(float64)
		if !ok1 || !ok2 || !ok3 || size < 0 || size >= 1<<53 {
			return fmt.Errorf("block %d: %v is not [size, state, requested_size]", i, f)
		}
		s.Blocks[i] = Block{Size: uint64(size), State: state, Requested: int64(req)}
	}
	return nil
}

// Config is a configuration check: the probe's first allocation under
// PYTORCH_CUDA_ALLOC_CONF, taken or refused.
type Config struct {
	Config       string `json:"config"`
	AllocConf    string `json:"alloc_conf"`
	Accepted     bool   `json:"accepted"`
	MaxSplitSize int64  `json:"max_split_size"` // when accepted
	Error        string `json:"error"`          // when refused: the exception's type and message
	Msg          string `json:"msg"`
}

// Read reads one recording, gzipped or not; name is for errors.
func Read(r io.Reader, name string) (*File, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("cudarec: %s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	f := &File{Name: name}
	sc := bufio.NewScanner(br)
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		var kind struct {
			Kind string `json:"kind"`
		}
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		if err := json.Unmarshal(text, &kind); err != nil {
			return nil, fmt.Errorf("cudarec: %s:%d: %w", name, line, err)
		}
		var err error
		switch kind.Kind {
		case "header":
			f.Header = new(Header)
			err = json.Unmarshal(text, f.Header)
		case "program":
			if f.Header == nil {
				return nil, fmt.Errorf("cudarec: %s:%d: a program before the header", name, line)
			}
			var p Program
			if err = json.Unmarshal(text, &p); err == nil {
				err = p.expand(len(f.Header.Keys))
			}
			f.Programs = append(f.Programs, p)
		case "config":
			var c Config
			err = json.Unmarshal(text, &c)
			f.Configs = append(f.Configs, c)
		case "end":
			f.Complete = true
		case "truncated", "failed":
			// the probe stopped early: Complete stays false
		default:
			err = fmt.Errorf("unknown kind %q", kind.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("cudarec: %s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cudarec: %s: %w", name, err)
	}
	return f, nil
}

// expand checks a program's steps against the header and fills in each
// step's Stats and Segs from the changes on file.
func (p *Program) expand(keys int) error {
	zero := int64(0)
	stats := make([]*int64, keys)
	for i := range stats {
		stats[i] = &zero
	}
	var segs []Segment
	for i := range p.Steps {
		s := &p.Steps[i]
		if !slices.Contains([]string{"malloc", "free", "record", "sync", "empty"}, s.Op) {
			return fmt.Errorf("program %s step %d: unknown op %q", p.Name, i, s.Op)
		}
		stats = slices.Clone(stats)
		for _, d := range s.DStats {
			if d[0] == nil || *d[0] < 0 || *d[0] >= int64(keys) {
				return fmt.Errorf("program %s step %d: a stat index out of the header's %d keys", p.Name, i, keys)
			}
			stats[*d[0]] = d[1]
		}
		if s.DSegs != nil {
			segs = *s.DSegs
		}
		s.Stats, s.Segs, s.DStats, s.DSegs = stats, segs, nil, nil
	}
	return nil
}

// ReadDir reads every recording (*.jsonl and *.jsonl.gz) of a folder, by
// name.
func ReadDir(dir string) ([]*File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cudarec: %w", err)
	}
	var out []*File
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") && !strings.HasSuffix(e.Name(), ".jsonl.gz") {
			continue
		}
		f, err := readFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func readFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cudarec: %w", err)
	}
	defer fh.Close()
	return Read(fh, filepath.Base(path))
}
