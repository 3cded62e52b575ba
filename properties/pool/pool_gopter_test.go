package pool

import (
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/internal/proptest"
)

// gopterPoolOp draws one call as Generate weights them: four bytes
// pick the kind, the size, the stream or dtype and device, and the index
// (poolOpOf).
func gopterPoolOp(persistent bool) gopter.Gen {
	return gen.SliceOfN(4, gen.UInt8()).Map(func(b []uint8) Op { return poolOpOf(persistent, [4]byte(b)) })
}

// gopterPoolRun checks the pool property over gopter's generated call
// lists, for both allocators, and reports whether it held.
func gopterPoolRun(faults []impl.Fault, seed int64, tests int) (bool, *gopter.TestResult) {
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = tests
	params.MaxSize = 40
	params.MaxShrinkCount = 200
	props := gopter.NewProperties(params)
	rep := &proptest.LastResult{}
	for _, persistent := range []bool{false, true} {
		name := "caching allocator: books and trace"
		if persistent {
			name = "persistent pool: books and trace"
		}
		props.Property(name, prop.ForAll(func(ops []Op, pre int) string {
			p := Program{Persistent: persistent, Capacity: 48 << 20, Ops: ops}
			switch {
			case persistent:
				p.Preallocate = poolPreallocs[pre]
			case pre%2 == 1:
				p.MaxSplitSize = uint64(21+pre) << 20
			}
			if f := Run(p, faults); f != nil {
				return f.Error()
			}
			return ""
		}, gen.SliceOf(gopterPoolOp(persistent)), gen.IntRange(0, len(poolPreallocs)-1)))
	}
	ok := props.Run(rep)
	return ok, rep.Result
}

func TestGopterPool(t *testing.T) {
	if ok, res := gopterPoolRun(nil, 1, 200); !ok {
		var b strings.Builder
		gopter.NewFormatedReporter(true, 160, &b).ReportTestResult("pool", res)
		t.Fatal(b.String())
	}
}

// TestGopterPoolCatchesFaults: the gopter property fails with each pool
// fault on.
func TestGopterPoolCatchesFaults(t *testing.T) {
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EnginePool {
			continue
		}
		t.Run(string(fi.Name), func(t *testing.T) {
			if ok, _ := gopterPoolRun([]impl.Fault{fi.Name}, 1, 1000); ok {
				t.Errorf("fault %s escaped the gopter pool property", fi.Name)
			}
		})
	}
}
