package cudarec_test

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/impl/gpu/cudarec"
)

// A recording of one program, malloc(1000) then free, as the probe writes
// it (here with three counters only), replayed on impl/gpu.
func ExampleReplay() {
	rec := strings.Join([]string{
		`{"kind":"header","config":"default","device":"NVIDIA H100 80GB HBM3","torch":"2.11.0+cu130","max_split_size":-1,` +
			`"keys":["num_device_alloc","allocated_bytes.all.current","reserved_bytes.all.current"]}`,
		`{"kind":"program","family":"named","name":"one-small-block","cap":67108864,"steps":[` +
			`{"op":"malloc","size":1000,"stream":0,"id":0,"ptr":139637978824704,"dstats":[[0,1],[1,1024],[2,2097152]],` +
			`"segs":[[139637978824704,2097152,0,1,0,[[1024,"active_allocated",1000],[2096128,"inactive",0]]]]},` +
			`{"op":"free","id":0,"dstats":[[1,0]],"segs":[[139637978824704,2097152,0,1,0,[[2097152,"inactive",1000]]]]}]}`,
		`{"kind":"end","programs":1}`,
	}, "\n")
	f, err := cudarec.Read(strings.NewReader(rec), "example.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := cudarec.Replay(f.Header, &f.Programs[0])
	fmt.Println(r.Program, "steps:", r.Steps, "agrees:", r.Agrees())

	// Had CUDA served the request from a 20 MiB segment, the replay
	// would say where impl/gpu differs.
	f, _ = cudarec.Read(strings.NewReader(strings.ReplaceAll(rec, "2097152", "20971520")), "example.jsonl")
	r = cudarec.Replay(f.Header, &f.Programs[0])
	fmt.Println("step", r.Step, "agrees:", r.Agrees())
	for _, m := range r.Mismatches {
		fmt.Println(m)
	}
	// Output:
	// one-small-block steps: 2 agrees: true
	// step 0 agrees: false
	// memory_stats()[reserved_bytes.all.current]: cuda 20971520, impl/gpu 2097152
	// segment 0x7f0000200000: cuda 0x7f0000200000 20971520 bytes small=true stream 0 expandable=false, impl/gpu 0x7f0000200000 2097152 bytes small=true stream 0
}
