package pool

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
)

// The pool checks that no catalog fault is the first to break, each made
// to fail on purpose: every check must be able to fail.
func TestPoolChecksCanFail(t *testing.T) {
	const MiB = 1 << 20
	cases := []struct {
		name, want string
		run        func() string
	}{
		{"NoFalseOOM", "holds nothing in use", func() string {
			// Unmerged free neighbours keep a segment from being released.
			c, _ := gpu.NewCaching(gpu.NewDevice(20*MiB, nil), gpu.CachingOptions{Faults: []impl.Fault{gpu.FaultPoolFreeNoMerge}})
			a, _ := c.Malloc(2*MiB, 0)
			b, _ := c.Malloc(2*MiB, 0)
			_, _ = c.Free(a), c.Free(b)
			if _, err := c.Malloc(20*MiB, 0); err == nil {
				return "no out of memory"
			}
			return falseOOM(c, 20*MiB)
		}},
		{"NoFalseOOM/device", "has 41943040 bytes free", func() string {
			c, _ := gpu.NewCaching(gpu.NewDevice(40*MiB, nil), gpu.CachingOptions{})
			return falseOOM(c, 3*MiB) // asked of an allocator that never failed
		}},
		{"Fit", "want the free block at 0x7f0000000000 (512 bytes), the best fit", func() string {
			c, _ := gpu.NewCaching(gpu.NewDevice(40*MiB, nil), gpu.CachingOptions{})
			a, _ := c.Malloc(512, 0)
			_, _ = c.Malloc(512, 0)
			_ = c.Free(a)
			snap := c.Snapshot()
			return judgeFit(snap, snap, 100, 0, 0, a+1024, nil) // an answer other than the hole
		}},
		{"Fit/segment", "starts no segment", func() string {
			c, _ := gpu.NewCaching(gpu.NewDevice(40*MiB, nil), gpu.CachingOptions{})
			a, _ := c.Malloc(512, 0)
			snap := c.Snapshot() // no free block of 3 MiB: a new segment is due
			return judgeFit(snap, snap, 3*MiB, 0, 0, a+512, nil)
		}},
		{"Release", "freed segments map[] with 0 retries; want map[0x7f0000000000:25165824] with 0", func() string {
			// The books of a full device of cached 24 MiB blocks, and an
			// answer to a 5 MiB malloc that freed none of them.
			c, _ := gpu.NewCaching(gpu.NewDevice(48*MiB, nil), gpu.CachingOptions{MaxSplitSize: 24 * MiB})
			a, _ := c.Malloc(24*MiB, 0)
			b, _ := c.Malloc(24*MiB, 0)
			_, _ = c.Free(a), c.Free(b)
			snap := c.Snapshot()
			return judgeRelease(snap, snap, 0, 5*MiB, 0, 24*MiB, 48*MiB, 0)
		}},
		{"OverLimit", "changed the stats: 0 bytes reserved in 0 segments, 1 retries, 1 OOMs", func() string {
			// The answer of an allocator that freed its cache for a 1 EiB
			// request: stats from before a malloc that went the usual way.
			c, _ := gpu.NewCaching(gpu.NewDevice(40*MiB, nil), gpu.CachingOptions{})
			a, _ := c.Malloc(512, 0)
			_ = c.Free(a)
			before := c.Stats()
			_, err := c.Malloc(gpu.MaxRequest-1, 0)
			_, msg := judgeOOM(c, gpu.MaxRequest, before, err)
			return msg
		}},
		{"OverLimit/accepted", "want out of memory", func() string {
			c, _ := gpu.NewCaching(gpu.NewDevice(40*MiB, nil), gpu.CachingOptions{})
			_, msg := judgeOOM(c, gpu.MaxRequest, c.Stats(), nil)
			return msg
		}},
		{"Reserved", "reserved_bytes 0", func() string {
			dev := gpu.NewDevice(40*MiB, nil)
			c, _ := gpu.NewCaching(dev, gpu.CachingOptions{})
			_, _ = dev.DevMalloc(MiB) // a segment the allocator does not know
			_, msg := checkCaching(c, nil)
			return msg
		}},
		{"Live", "is not a block in use", func() string {
			c, _ := gpu.NewCaching(gpu.NewDevice(40*MiB, nil), gpu.CachingOptions{})
			a, _ := c.Malloc(512, 0)
			_, msg := checkCaching(c, []liveBlock{{a + 512, 512}})
			return msg
		}},
		{"Live/count", "1 blocks handed out by the books, 0 by the calls", func() string {
			c, _ := gpu.NewCaching(gpu.NewDevice(40*MiB, nil), gpu.CachingOptions{})
			_, _ = c.Malloc(512, 0)
			_, msg := checkCaching(c, []liveBlock{})
			return msg
		}},
		{"Model", "double-free", func() string {
			// The duplicate guard off and the Guard check skipped: the
			// model sees the block handed out twice.
			var rec impl.Recording
			p, _ := gpu.NewPersistent(gpu.NewDevice(40*MiB, rec.Record), gpu.PersistentOptions{Faults: []impl.Fault{gpu.FaultPoolDuplicateFreeEntry}})
			a, _ := p.Acquire(gpu.Key{Elements: 64})
			_, _ = p.Release(a), p.Release(a)
			return (&Failure{Trace: rec.Events()}).modelVerdict()
		}},
		{"Model/leak", "leak", func() string {
			// A pool block never put back when the run ends.
			var rec impl.Recording
			dev := gpu.NewDevice(40*MiB, rec.Record)
			p, _ := gpu.NewPersistent(dev, gpu.PersistentOptions{})
			_, _ = p.Acquire(gpu.Key{Elements: 64})
			dev.End()
			return (&Failure{Trace: rec.Events()}).modelVerdict()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.run(); !strings.Contains(got, c.want) {
				t.Errorf("check said %q, want it to fail with %q", got, c.want)
			}
		})
	}
}
