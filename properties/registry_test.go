package properties

import (
	"sync"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// TestRegistryTraceReplays records a concurrent run of impl/registry as
// layer-1 events and replays it through the model: no violation but the
// leaks, and those are exactly the registry's own leak report.
func TestRegistryTraceReplays(t *testing.T) {
	for _, tt := range []struct {
		name  string
		leave int // blocks each goroutine leaves registered
	}{{"clean", 0}, {"leaky", 2}} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var rec impl.Recording
			reg, err := registry.New(registry.Config{Record: func(ev traces.Event) {
				mu.Lock()
				rec.Record(ev)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 100 {
						p := registry.Ptr(0x100000*(g+1) + 0x100*i)
						if err := reg.RegisterBuffer(p, 48, registry.KindHeap); err != nil {
							t.Error(err)
							return
						}
						if err := reg.Alias(p, p+8); err != nil {
							t.Error(err)
							return
						}
						if i < tt.leave {
							continue
						}
						for _, q := range []registry.Ptr{p + 8, p} {
							if _, err := reg.Unregister(q); err != nil {
								t.Error(err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			leaks := reg.End()
			rep, err := model.Replay(rec.Source())
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range rep.Violations {
				if v.Kind != traces.Leak {
					t.Errorf("%s at event %d: %s", v.Kind, v.Event, v.Message)
				}
			}
			if rep.Leaked.Objects != len(leaks) || rep.Leaked.Bytes != uint64(48*len(leaks)) || len(leaks) != 8*tt.leave {
				t.Errorf("model: %d leaked (%d B); registry: %d leaks; want %d", rep.Leaked.Objects, rep.Leaked.Bytes, len(leaks), 8*tt.leave)
			}
		})
	}
}
