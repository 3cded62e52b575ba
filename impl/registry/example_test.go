package registry_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl/registry"
)

// A buffer with an alias: unregistering the real pointer leaves the
// buffer alive; unregistering the last alias frees it, with its kind.
func Example() {
	reg, err := registry.New(registry.Config{
		Free: func(b registry.Block) { fmt.Printf("free %v (%d B, %v)\n", b.Ptr, b.Size, b.Kind) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = reg.RegisterBuffer(0x7000, 4096, registry.KindDevice)
	_ = reg.Alias(0x7000, 0x7100) // a view into the buffer
	_ = reg.Register(0x9000, 64)

	_, _ = reg.Unregister(0x7000)
	fmt.Println(reg.IsRegistered(0x7000), reg.Buffers(), reg.TotalBytes())
	_, _ = reg.Unregister(0x7100)
	_, err = reg.Unregister(0x7100)
	fmt.Println(err)

	for _, l := range reg.End() {
		fmt.Printf("leak: %v, %d bytes\n", l.Ptr, l.Size)
	}
	// Output:
	// false 1 4160
	// free 0x7000 (4096 B, device)
	// registry: unregister 0x7100: not registered
	// leak: 0x9000, 64 bytes
}
