package drive_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/flat"
)

// The protocol's cost, in one run: the same generated programs, checked
// by the same model, in process (properties.Run against impl's runtime),
// over the pipe to impl's runtime in another process (impldriver), and
// over the pipe to the C runtime. `go test -bench Drive ./drive` prints
// programs/s for each; reports/gen puts the ratios in reports/.

func programs(n int) []flat.Program {
	r := rand.New(rand.NewPCG(1, 2))
	ps := make([]flat.Program, n)
	for i := range ps {
		ps[i] = flat.Generate(r)
	}
	return ps
}

func BenchmarkDriveInProcess(b *testing.B) {
	ps := programs(1024)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, f := properties.Run(ps[i%len(ps)], impl.Config{}); f != nil {
			b.Fatal(f)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "programs/s")
}

func benchDriver(b *testing.B, cfg drive.Config) {
	ps := programs(1024)
	r, err := drive.NewRunner(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	start := time.Now()
	i := 0
	err = r.Stream(func() (flat.Program, bool) {
		i++
		return ps[i%len(ps)], i <= b.N
	}, func(_ flat.Program, res *drive.Result) bool {
		if res.Failure != nil {
			b.Fatal(res.Failure)
		}
		return true
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "programs/s")
}

func BenchmarkDriveGoDriver(b *testing.B) { benchDriver(b, testDriver("impl", 5*time.Second)) }

func BenchmarkDriveCDriver(b *testing.B) { benchDriver(b, cDriver(buildCDriver(b), "")) }

// BenchmarkDriveRatios runs the programs three ways in turn, 32 at a
// time (in process, over the pipe to the Go driver, over the pipe to the
// C driver, each driver with two programs in flight as Search runs them),
// so that load on the machine falls on all three alike, and reports each
// one's programs/s and the pipes' cost as ratios of time per program.
func BenchmarkDriveRatios(b *testing.B) {
	ps := programs(1024)
	goRunner, err := drive.NewRunner(testDriver("impl", 5*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer goRunner.Close()
	cRunner, err := drive.NewRunner(cDriver(buildCDriver(b), ""))
	if err != nil {
		b.Fatal(err)
	}
	defer cRunner.Close()
	var inProc, overGo, overC time.Duration
	stream := func(r *drive.Runner, chunk []flat.Program) time.Duration {
		t0 := time.Now()
		i := 0
		err := r.Stream(func() (flat.Program, bool) {
			if i == len(chunk) {
				return flat.Program{}, false
			}
			i++
			return chunk[i-1], true
		}, func(_ flat.Program, res *drive.Result) bool {
			if res.Failure != nil {
				b.Fatal(res.Failure)
			}
			return true
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	b.ResetTimer()
	const chunk = 32
	for done := 0; done < b.N; done += chunk {
		lo := done % len(ps)
		c := ps[lo:min(lo+chunk, len(ps), lo+b.N-done)]
		t0 := time.Now()
		for _, p := range c {
			if _, f := properties.Run(p, impl.Config{}); f != nil {
				b.Fatal(f)
			}
		}
		inProc += time.Since(t0)
		overGo += stream(goRunner, c)
		overC += stream(cRunner, c)
	}
	n := float64(b.N)
	b.ReportMetric(n/inProc.Seconds(), "inprocess-programs/s")
	b.ReportMetric(n/overGo.Seconds(), "godriver-programs/s")
	b.ReportMetric(n/overC.Seconds(), "cdriver-programs/s")
	b.ReportMetric(overGo.Seconds()/inProc.Seconds(), "godriver/inprocess")
	b.ReportMetric(overC.Seconds()/inProc.Seconds(), "cdriver/inprocess")
}
