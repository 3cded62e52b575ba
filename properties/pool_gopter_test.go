package properties

import (
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
)

// gopterPoolOp draws one call as GeneratePool weights them: five bytes
// pick the kind, the size, the stream or dtype and the index.
func gopterPoolOp(persistent bool) gopter.Gen {
	return gen.SliceOfN(4, gen.UInt8()).Map(func(b []uint8) PoolOp {
		if persistent {
			kinds := []string{"acquire", "acquire", "release", "release", "rerelease"}
			return PoolOp{Kind: kinds[int(b[0])%len(kinds)], Size: poolElems[int(b[1])%len(poolElems)],
				DType: gpu.DType(int(b[2]%2) * int(gpu.F16)), Device: (b[2] >> 1) % 2, Index: int(b[3] % 8)}
		}
		kinds := []string{"malloc", "malloc", "malloc", "free", "free", "record", "sync", "empty"}
		return PoolOp{Kind: kinds[int(b[0])%len(kinds)], Size: poolSizes[int(b[1])%len(poolSizes)],
			Stream: gpu.Stream(b[2] % 2), Index: int(b[3] % 8)}
	})
}

// gopterPoolRun checks the pool property over gopter's generated call
// lists, for both allocators, and reports whether it held.
func gopterPoolRun(faults []impl.Fault, seed int64, tests int) (bool, *gopter.TestResult) {
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = tests
	params.MaxSize = 40
	params.MaxShrinkCount = 200
	props := gopter.NewProperties(params)
	rep := &lastResult{}
	for _, persistent := range []bool{false, true} {
		name := "caching allocator: books and trace"
		if persistent {
			name = "persistent pool: books and trace"
		}
		props.Property(name, prop.ForAll(func(ops []PoolOp, pre int) string {
			p := PoolProgram{Persistent: persistent, Capacity: 48 << 20, Ops: ops}
			if persistent {
				p.Preallocate = poolPreallocs[pre]
			}
			if f := RunPool(p, faults); f != nil {
				return f.Error()
			}
			return ""
		}, gen.SliceOf(gopterPoolOp(persistent)), gen.IntRange(0, len(poolPreallocs)-1)))
	}
	ok := props.Run(rep)
	return ok, rep.result
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
