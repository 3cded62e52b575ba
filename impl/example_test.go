package impl_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// A function returns a tensor to its caller, which keeps it in a struct
// next to a parameter. The runtime writes its trace as it goes: the calls
// and, right after each, the frees it caused.
func Example() {
	tw := traces.NewWriter(os.Stdout, impl.Header())
	rt := impl.New(impl.Config{Record: impl.RecordTo(tw)})
	var errs []error
	do := func(err error) { errs = append(errs, err) }

	// fn main() { let w = Tensor::zeros([16]); params.w = w;
	do(rt.ScopeEnter())
	w, err := rt.Alloc(64)
	do(err)
	do(rt.ParamRegister("w", w))

	// fn make() -> Tensor { let t = Tensor::ones([16]); return t }
	// Returning t moves it out of make's scope: unregister, no release.
	do(rt.ScopeEnter())
	t, err := rt.Alloc(64)
	do(err)
	do(rt.Unregister(t))
	do(rt.ScopeExit())

	// let t = make(); let s = Pair { a: w, b: t }; }
	// At the closing brace the records go newest first: s dies, releasing
	// its fields, then t's and w's records drop a count each: t goes, w
	// stays with the parameter.
	do(rt.Register(t))
	_, err = rt.StructInit(32, []traces.Addr{w, t})
	do(err)
	do(rt.ScopeExit())

	// The parameter goes, and with it w.
	do(rt.ParamRelease("w"))
	do(rt.End())

	do(tw.Close())
	fmt.Println("errors:", errors.Join(errs...))
	// Output:
	// {"format":"tlcheck-trace","version":1,"effects":true,"source":"tlcheck impl (Go)"}
	// {"op":"scope_enter"}
	// {"op":"alloc","addr":"0x40000000","size":64,"count":1}
	// {"op":"param_register","name":"w","addr":"0x40000000","count":2}
	// {"op":"scope_enter"}
	// {"op":"alloc","addr":"0x40000040","size":64,"count":1}
	// {"op":"unregister","addr":"0x40000040","count":1}
	// {"op":"scope_exit"}
	// {"op":"register","addr":"0x40000040","count":1}
	// {"op":"struct_init","addr":"0x20000000","size":32,"fields":["0x40000000","0x40000040"],"count":1}
	// {"op":"scope_exit"}
	// {"op":"free","addr":"0x20000000"}
	// {"op":"free","addr":"0x40000040"}
	// {"op":"param_release","name":"w","count":0}
	// {"op":"free","addr":"0x40000000"}
	// {"op":"end"}
	// errors: <nil>
}

// Releasing an object twice is refused with the contract's violation
// kind, and the call is recorded all the same.
func ExampleRuntime_Release() {
	var rec impl.Recording
	rt := impl.New(impl.Config{Record: rec.Record})
	_ = rt.ScopeEnter()
	a, _ := rt.Alloc(64)
	fmt.Println(rt.Release(a))
	fmt.Println(rt.Release(a))
	fmt.Println(len(rec.Events()), "events")
	// Output:
	// <nil>
	// double-free: release 0x40000000: object already freed
	// 5 events
}

// Under LIFO reuse a new object lands where one just died; the record the
// dead one left in the scope is purged, so scope exit leaves the new one,
// held by a parameter, alive.
func ExampleReuse() {
	rt := impl.New(impl.Config{Reuse: impl.ReuseLIFO})
	_ = rt.ScopeEnter()
	a, _ := rt.Alloc(64)
	_ = rt.Release(a)
	b, _ := rt.Alloc(64)
	_ = rt.ParamRegister("w", b)
	_ = rt.ScopeExit()
	fmt.Println(a == b, rt.State().Objects[b])
	// Output:
	// true 1
}
