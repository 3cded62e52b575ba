package explain_test

import (
	"bytes"
	"fmt"

	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// An evaluation loop that keeps every output, and with it every graph,
// until a 300 MiB device is full: the explanation, from a replay that
// agrees with the snapshot, and what each max_split_size_mb would have
// done.
func ExampleExplain() {
	s, _ := snapgen.Generate(snapgen.Config{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 300 << 20})
	var pickle bytes.Buffer
	s.WritePickle(&pickle)
	r, _ := torchsnap.NewReader(&pickle)

	ex, err := explain.Explain(r, explain.Options{Settings: []explain.Setting{{Conf: "max_split_size_mb:64", MaxSplitSize: 64 << 20}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	o := ex.OOM
	fmt.Printf("request %d MiB, device free %d MiB, capacity %d MiB (%s)\n", o.Request>>20, o.DeviceFree>>20, ex.Capacity>>20, ex.CapacityFrom)
	fmt.Printf("allocated %d MiB of %d MiB reserved\n", o.Allocated>>20, o.Reserved>>20)
	for _, w := range ex.WhatIf {
		fmt.Printf("%s: peak reserved %d MiB, fits %v\n", w.Setting, w.PeakReserved>>20, w.Fits)
	}
	fmt.Println("validated:", ex.Validation.Agrees)
	// Output:
	// request 2 MiB, device free 2 MiB, capacity 300 MiB (oom)
	// allocated 297 MiB of 298 MiB reserved
	// default: peak reserved 298 MiB, fits false
	// max_split_size_mb:64: peak reserved 298 MiB, fits false
	// validated: true
}
