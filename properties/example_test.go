package properties_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// A parameter registered inside a scope must outlive it: the correct
// runtime keeps it, and a runtime whose param_register forgets to acquire
// frees it at scope exit.
func ExampleRun() {
	p := flat.Program{Steps: []flat.Step{
		{Op: traces.OpScopeEnter},
		{Op: traces.OpAlloc, Size: 64},
		{Op: traces.OpParamRegister, Name: "w"}, // Target: the first live object
		{Op: traces.OpScopeExit},
	}}
	_, f := properties.Run(p, impl.Config{})
	fmt.Println("correct runtime fails:", f != nil)

	// The faulty runtime's count is one short after param_register (the
	// states differ: Refines breaks first); at scope exit it frees the
	// parameter, which the model sees as a premature free.
	_, f = properties.Run(p, impl.Config{Faults: []impl.Fault{"param-register-no-acquire"}})
	fmt.Println("faulty runtime breaks:", f.Property, "first; in all", f.Broken)
	// Output:
	// correct runtime fails: false
	// faulty runtime breaks: Refines first; in all [NoPrematureFree Refines]
}

// Search finds a failing program; Shrink brings it down to a few steps.
func ExampleShrink() {
	cfg := impl.Config{Faults: []impl.Fault{"unregister-releases"}}
	p, f, _ := properties.Search(cfg, 1, func(n int) bool { return n < 1000 })
	small, f := properties.Shrink(p, cfg)
	fmt.Print(small)
	fmt.Println(f.Property)
	// Output:
	//   0  scope_enter
	//   1  alloc 16
	//   2  unregister live[0]
	// NoPrematureFree
}
