package cudarec_test

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tlcheck/tlcheck/impl/gpu/cudarec"
)

// recorded is the folder of recordings made on a GPU; see
// impl/gpu/cudaprobe/README.md.
const recorded = "../testdata/cuda"

// compared reads and replays the recordings once for all the tests.
var compared = sync.OnceValues(func() ([]*cudarec.File, error) {
	return cudarec.ReadDir(recorded)
})

var summary = sync.OnceValue(func() cudarec.Summary {
	files, _ := compared()
	return cudarec.Compare(files)
})

func recordings(t *testing.T) ([]*cudarec.File, cudarec.Summary) {
	t.Helper()
	files, err := compared()
	if err != nil {
		t.Fatal(err)
	}
	return files, summary()
}

// TestRecordedCUDA replays every program recorded on a real GPU under
// PyTorch on impl/gpu and wants every step to agree: what each malloc
// returned or refused, memory_stats() and memory_snapshot().
func TestRecordedCUDA(t *testing.T) {
	_, sum := recordings(t)
	tot := sum.Totals()
	// The recordings must be there and whole: a folder that lost them
	// would pass vacuously.
	if tot.Programs < 800 || tot.Steps < 20000 {
		t.Fatalf("%d programs, %d steps recorded; want at least 800 and 20000", tot.Programs, tot.Steps)
	}
	shown := 0
	for _, f := range sum.Files {
		if !f.File.Complete {
			t.Errorf("%s: the probe stopped before its last program", f.File.Name)
		}
		for i, r := range f.Results {
			p := &f.File.Programs[i]
			if len(p.StartNonzero) > 0 || p.CleanupLeft != 0 {
				t.Errorf("%s %s: the GPU's allocator was not empty around the program (%v, %d bytes left)", f.File.Name, p.Name, p.StartNonzero, p.CleanupLeft)
			}
			if r.Agrees() {
				continue
			}
			if shown++; shown <= 5 {
				t.Errorf("%s %s: step %d (%s) differs:\n\t%s", f.File.Name, r.Program, r.Step, describe(p.Steps[r.Step]), join(r.Mismatches))
			}
		}
	}
	if shown > 0 {
		t.Errorf("%d of %d programs differ from CUDA", shown, tot.Programs)
	}
}

func describe(s cudarec.Step) string {
	switch s.Op {
	case "malloc":
		return "malloc " + itoa(s.Size) + " bytes on stream " + itoa(uint64(s.Stream))
	case "free", "record":
		return s.Op + " of malloc #" + itoa(uint64(s.ID))
	case "sync":
		return "synchronize stream " + itoa(uint64(s.Stream))
	}
	return "empty_cache"
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func join(ms []cudarec.Mismatch) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.String())
	}
	return strings.Join(out, "\n\t")
}

// TestRecordedCases: the cases of issue 20 were recorded on the GPU, by
// name, and agree: release_available_cached_blocks with max_split_size_mb
// (a block pending on another stream stays pending), a request of 1 EiB or
// more, and which max_split_size_mb PyTorch takes.
func TestRecordedCases(t *testing.T) {
	_, sum := recordings(t)
	agree := map[string]bool{}
	for _, f := range sum.Files {
		for _, r := range f.Results {
			agree[f.File.Header.Config+"/"+r.Program] = r.Agrees()
		}
	}
	for _, name := range []string{
		"split24/issue20-one-oversize-block", "split24/issue20-pending-stays-pending",
		"split24/not-enough-then-whole-cache", "default/one-eib", "default/cap-exact",
		"default/pending-until-sync", "default/pending-through-retry", "split20/twenty-mib-segment-is-oversize",
	} {
		if ok, found := agree[name]; !found || !ok {
			t.Errorf("%s: recorded %v, agrees %v; want both", name, found, ok)
		}
	}
	confs := map[string]bool{}
	for _, c := range sum.Configs {
		confs[c.Config.AllocConf] = c.Config.Accepted
		if !c.Agrees() {
			t.Errorf("%s: PyTorch accepted it: %v (%s); NewCaching says %v", c.Config.AllocConf, c.Config.Accepted, c.Config.Msg, c.Sim)
		}
	}
	want := map[string]bool{"max_split_size_mb:20": true, "max_split_size_mb:19": false, "max_split_size_mb:8": false}
	for k, v := range want {
		if got, ok := confs[k]; !ok || got != v {
			t.Errorf("%s: recorded %v accepted %v; want accepted %v", k, ok, got, v)
		}
	}
}

// TestNotCompared: the memory_stats() keys left out are exactly those
// impl/gpu's package comment says it lacks.
func TestNotCompared(t *testing.T) {
	files, _ := recordings(t)
	for _, f := range files {
		if f.Header == nil {
			continue
		}
		for _, k := range f.Header.NotCompared() {
			if k != "max_split_size" && k != "num_sync_all_streams" && !strings.HasPrefix(k, "oversize_") {
				t.Errorf("%s: memory_stats()[%s] is not compared", f.Name, k)
			}
		}
		if len(f.Header.StatsKeys) == 0 || !slices.Contains(f.Header.Keys, "num_alloc_retries") {
			t.Errorf("%s: the header lists no memory_stats() keys", f.Name)
		}
	}
}

// TestReadErrors: a recording that cannot be read is an error naming the
// file and line, never a panic.
func TestReadErrors(t *testing.T) {
	head := `{"kind":"header","config":"x","keys":["num_ooms"]}` + "\n"
	for _, tt := range []struct{ name, in, want string }{
		{"not JSON", "{\n", "bad.jsonl:1"},
		{"unknown kind", `{"kind":"story"}`, `bad.jsonl:1: unknown kind "story"`},
		{"program first", `{"kind":"program","name":"p"}`, "bad.jsonl:1: a program before the header"},
		{"unknown op", head + `{"kind":"program","name":"p","steps":[{"op":"fork"}]}`, `bad.jsonl:2: program p step 0: unknown op "fork"`},
		{"stat out of range", head + `{"kind":"program","name":"p","steps":[{"op":"empty","dstats":[[3,1]]}]}`, "bad.jsonl:2: program p step 0: a stat index out of the header's 1 keys"},
		{"short segment", head + `{"kind":"program","name":"p","steps":[{"op":"empty","segs":[[1,2]]}]}`, "a segment has 6 fields, not 2"},
		{"short block", head + `{"kind":"program","name":"p","steps":[{"op":"empty","segs":[[1,2,0,1,0,[[5]]]]}]}`, "a block has 3 fields, not 1"},
		{"bad gzip", "\x1f\x8b\x00", "bad.jsonl"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cudarec.Read(strings.NewReader(tt.in), "bad.jsonl")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestRecordedCUDACatchesFaults: each fault of the caching allocator in
// impl.Catalog, switched on, makes some recorded program differ from
// CUDA: the comparison has teeth.
func TestRecordedCUDACatchesFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("replays every recording once a fault; -short skips it")
	}
	files, _ := recordings(t)
	for _, f := range cudarec.CachingFaults {
		t.Run(string(f), func(t *testing.T) {
			tot := cudarec.Compare(files, f).Totals()
			if tot.Agree == tot.Programs {
				t.Errorf("with %s every one of %d programs agrees with CUDA", f, tot.Programs)
			}
			t.Logf("%s: %d of %d programs differ", f, tot.Programs-tot.Agree, tot.Programs)
		})
	}
}
