package drive_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
)

// The protocol's cost, in one run: the same generated programs, checked
// by the same model, in process (properties.Run against impl's runtime),
// over the pipe to impl's runtime in another process (impldriver), and
// over the pipe to the C runtime. `go test -bench Drive ./drive` prints
// programs/s for each; reports/gen puts the ratios in reports/.

func programs(n int) []properties.Program {
	r := rand.New(rand.NewPCG(1, 2))
	ps := make([]properties.Program, n)
	for i := range ps {
		ps[i] = properties.Generate(r)
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
	for i := 0; i < b.N; i++ {
		_, res, err := r.RunProgram(ps[i%len(ps)])
		if err != nil {
			b.Fatal(err)
		}
		if res.Failure != nil {
			b.Fatal(res.Failure)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "programs/s")
}

func BenchmarkDriveGoDriver(b *testing.B) { benchDriver(b, testDriver("impl", 5*time.Second)) }

func BenchmarkDriveCDriver(b *testing.B) { benchDriver(b, cDriver(buildCDriver(b), "")) }
