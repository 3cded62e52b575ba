package impl_test

import (
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// The planner lays out the frame of
//
//	fn f(x) { let a = x * 2;   // statement 0
//	          let b = a + 1;   // statement 1: a's last use
//	          let c = b * b;   // statement 2: b's last use
//	          c }              // statement 3
//
// a and b meet at statement 1 (it reads a and writes b), so they need two
// slots; c can take a's.
func ExamplePlanFrame() {
	p, err := impl.PlanFrame([]impl.Interval{{First: 0, Last: 1}, {First: 1, Last: 2}, {First: 2, Last: 3}})
	fmt.Println(p.Slots, p.Size, err)
	// Output: [0 1 0] 2 <nil>
}

// A function's temporaries live in its frame: the lowering plans the
// frame, enters it, asks the arena for each variable's slot and leaves
// it, which drops every buffer at once. The runtime records it all as
// layer-3 events.
func ExampleRuntime_ArenaGet() {
	tw := traces.NewWriter(os.Stdout, impl.Header())
	rt := impl.New(impl.Config{Record: impl.RecordTo(tw)})
	lives := []impl.Interval{{First: 0, Last: 1}, {First: 1, Last: 2}, {First: 2, Last: 3}}
	p, _ := rt.PlanFrame(lives)
	_ = rt.FnEnter(p.Size)
	names := []string{"a", "b", "c"}
	sizes := []uint64{64, 64, 256} // c is bigger: its slot grows, a's old buffer stays valid
	for i := range lives {
		buf, _ := rt.ArenaGet(p.Slots[i], sizes[i], names[i])
		_ = rt.Write(buf, sizes[i], names[i])
	}
	_ = rt.FnExit()
	_ = rt.End()
	_ = tw.Close()
	// Output:
	// {"format":"tlcheck-trace","version":1,"effects":true,"source":"tlcheck impl (Go)"}
	// {"op":"fn_enter","slots":2}
	// {"op":"arena_get","slot":0,"addr":"0x1000000","size":64,"var":"a"}
	// {"op":"write","addr":"0x1000000","size":64,"var":"a"}
	// {"op":"arena_get","slot":1,"addr":"0x1000040","size":64,"var":"b"}
	// {"op":"write","addr":"0x1000040","size":64,"var":"b"}
	// {"op":"arena_get","slot":0,"addr":"0x1000080","size":256,"var":"c"}
	// {"op":"write","addr":"0x1000080","size":256,"var":"c"}
	// {"op":"fn_exit"}
	// {"op":"end"}
}
