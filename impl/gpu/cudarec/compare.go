package cudarec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
)

// Summary is every recording of a folder replayed on impl/gpu.
type Summary struct {
	Files   []FileSummary
	Configs []ConfigResult
}

// FileSummary is one recording replayed.
type FileSummary struct {
	File     *File
	Results  []Result // one a program, in order
	Coverage Coverage
}

// Coverage counts what a recording's programs exercised.
type Coverage struct {
	Programs, Steps, Agree, StepsCompared int
	Ops                                   map[string]int // steps by op
	Families                              map[string]int // programs by family
	OOMs                                  int            // mallocs refused with torch.OutOfMemoryError
	Retries                               int64          // num_alloc_retries, summed over programs
	DeviceFrees                           int64          // num_device_free (cudaFree), summed over programs
	PendingSteps                          int            // steps after which a block was active_pending_free
	Drained                               int            // steps during which a stream's work finished
	// Of the steps of programs that kept streams 1 and 2 busy: those that
	// called cudaFree, those of them after which both streams had
	// finished, and the steps that finished a stream with no cudaFree,
	// synchronize, empty_cache or retry to explain it (its sleep ran out).
	BusyFrees, BusyFreesDrained, Unexplained int
	Seconds                                  float64 // the programs' time on the GPU, stats and snapshots included
}

// ConfigResult is a configuration check held to NewCaching.
type ConfigResult struct {
	Config Config
	Sim    error // what NewCaching said to the same max_split_size_mb
}

// Agrees reports whether NewCaching takes the configuration exactly when
// PyTorch does.
func (c ConfigResult) Agrees() bool { return c.Config.Accepted == (c.Sim == nil) }

// Compare replays every program of every file, with faults switched on if
// any, and checks every configuration check.
func Compare(files []*File, faults ...impl.Fault) Summary {
	var sum Summary
	for _, f := range files {
		for _, c := range f.Configs {
			sum.Configs = append(sum.Configs, CompareConfig(c))
		}
		if f.Header == nil {
			continue
		}
		fs := FileSummary{File: f, Coverage: Coverage{Ops: map[string]int{}, Families: map[string]int{}}}
		for i := range f.Programs {
			p := &f.Programs[i]
			r := Replay(f.Header, p, faults...)
			fs.Results = append(fs.Results, r)
			fs.Coverage.add(f.Header, p, r)
		}
		sum.Files = append(sum.Files, fs)
	}
	return sum
}

func (c *Coverage) add(h *Header, p *Program, r Result) {
	c.Programs++
	c.Families[p.Family]++
	c.Steps += len(p.Steps)
	c.StepsCompared += r.Steps
	c.Seconds += p.Seconds
	if r.Agrees() {
		c.Agree++
	}
	c.addStreams(h, p)
	for _, s := range p.Steps {
		c.Ops[s.Op]++
		if s.Error == "oom" {
			c.OOMs++
		}
		if len(s.Done) > 0 || len(s.Before) > 0 {
			c.Drained++
		}
		if pending(s.Segs) {
			c.PendingSteps++
		}
	}
	if n := len(p.Steps); n > 0 {
		for i, k := range h.Keys {
			v := p.Steps[n-1].Stats[i]
			switch {
			case v == nil:
			case k == "num_alloc_retries":
				c.Retries += *v
			case k == "num_device_free":
				c.DeviceFrees += *v
			}
		}
	}
}

// addStreams counts, in a program that kept streams 1 and 2 busy, what
// finished their work.
func (c *Coverage) addStreams(h *Header, p *Program) {
	if !p.Sleeps {
		return
	}
	at := func(key string) int {
		for i, k := range h.Keys {
			if k == key {
				return i
			}
		}
		return -1
	}
	frees, retries := at("num_device_free"), at("num_alloc_retries")
	if frees < 0 || retries < 0 {
		return
	}
	var lastFrees, lastRetries int64
	for _, s := range p.Steps {
		nf, nr := val(s.Stats[frees]), val(s.Stats[retries])
		freed, retried := nf > lastFrees, nr > lastRetries
		lastFrees, lastRetries = nf, nr
		if freed {
			c.BusyFrees++
			if len(s.Done)+len(s.Before) == 2 {
				c.BusyFreesDrained++
			}
		}
		if len(s.Before) > 0 || len(s.Done) > 0 && !freed && !retried && s.Op != "sync" && s.Op != "empty" {
			c.Unexplained++
		}
	}
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func pending(segs []Segment) bool {
	for _, s := range segs {
		for _, b := range s.Blocks {
			if b.State == gpu.StatePendingFree {
				return true
			}
		}
	}
	return false
}

// CompareConfig asks NewCaching to take the max_split_size_mb of c.
func CompareConfig(c Config) ConfigResult {
	mb, err := maxSplitMB(c.AllocConf)
	if err == nil {
		_, err = gpu.NewCaching(gpu.NewDevice(1<<30, nil), gpu.CachingOptions{MaxSplitSize: mb << 20})
	}
	return ConfigResult{Config: c, Sim: err}
}

// maxSplitMB reads max_split_size_mb:N out of a PYTORCH_CUDA_ALLOC_CONF.
func maxSplitMB(conf string) (uint64, error) {
	for _, kv := range strings.Split(conf, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), ":")
		if k == "max_split_size_mb" {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return 0, fmt.Errorf("cudarec: max_split_size_mb %q: %w", v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("cudarec: %q sets no max_split_size_mb", conf)
}

// Totals adds up the coverage of every file.
func (s Summary) Totals() Coverage {
	t := Coverage{Ops: map[string]int{}, Families: map[string]int{}}
	for _, f := range s.Files {
		c := f.Coverage
		t.Programs += c.Programs
		t.Steps += c.Steps
		t.Agree += c.Agree
		t.StepsCompared += c.StepsCompared
		t.OOMs += c.OOMs
		t.Retries += c.Retries
		t.DeviceFrees += c.DeviceFrees
		t.PendingSteps += c.PendingSteps
		t.Drained += c.Drained
		t.BusyFrees += c.BusyFrees
		t.BusyFreesDrained += c.BusyFreesDrained
		t.Unexplained += c.Unexplained
		t.Seconds += c.Seconds
		for k, n := range c.Ops {
			t.Ops[k] += n
		}
		for k, n := range c.Families {
			t.Families[k] += n
		}
	}
	return t
}

// NotCompared lists the keys of PyTorch's memory_stats() that impl/gpu's
// Stats lacks, so that no step compares them (the package comment of
// impl/gpu names them as left out).
func (h *Header) NotCompared() []string {
	sim := gpu.Stats{}.Map()
	var out []string
	for _, k := range h.StatsKeys {
		if _, ok := sim[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}
