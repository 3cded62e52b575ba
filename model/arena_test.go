package model_test

import "testing"

func TestArena(t *testing.T) {
	runScenarios(t, []scenario{
		{"clean", hdr + `
{"op":"fn_enter","slots":2}
{"op":"arena_get","slot":0,"addr":"0x1000","size":256,"var":"x"}
{"op":"write","addr":"0x1000","size":256,"var":"x"}
{"op":"arena_get","slot":1,"addr":"0x1100","size":256,"var":"y"}
{"op":"read","addr":"0x1000","size":8,"var":"x"}
{"op":"arena_get","slot":0,"addr":"0x1000","size":256,"var":"z"}
{"op":"write","addr":"0x1000","var":"z"}
{"op":"arena_get","slot":0,"addr":"0x1200","size":64}
{"op":"read","addr":"0x1000"}
{"op":"fn_exit"}
{"op":"fn_enter","slots":1}
{"op":"arena_get","slot":0,"addr":"0x1000","size":512,"var":"x"}
{"op":"read","addr":"0x1100","var":"x"}
{"op":"fn_exit"}
{"op":"end"}`, []string{"leaked 0 0", "complete true"}},
		{"use after frame exit", hdr + `
{"op":"fn_enter","slots":1}
{"op":"arena_get","slot":0,"addr":"0x1000","size":256}
{"op":"fn_exit"}
{"op":"read","addr":"0x1010","size":4}
{"op":"end"}`, []string{"use-after-free 3 0x1010", "leaked 0 0", "complete true"}},
		{"variable whose slot was reused", hdr + `
{"op":"fn_enter","slots":1}
{"op":"arena_get","slot":0,"addr":"0x1000","size":256,"var":"a"}
{"op":"arena_get","slot":0,"addr":"0x1000","size":256,"var":"b"}
{"op":"write","addr":"0x1000","size":4,"var":"a"}
{"op":"fn_exit"}
{"op":"end"}`, []string{"stale-reuse 3 0x1000", "leaked 0 0", "complete true"}},
		{"misuse", hdr + `
{"op":"fn_exit"}
{"op":"arena_get","slot":0,"addr":"0x1000","size":256}
{"op":"fn_enter","slots":2}
{"op":"arena_get","slot":2,"addr":"0x1000","size":256}
{"op":"arena_get","slot":-1,"addr":"0x1000","size":256}
{"op":"end"}`, []string{"misuse 0 0x0", "misuse 1 0x1000", "misuse 3 0x1000", "misuse 4 0x1000",
			"misuse 5 0x0", "leaked 0 0", "complete true"}},
		{"buffers overlap", hdr + `
{"op":"malloc","addr":"0x1000","size":4096}
{"op":"fn_enter","slots":2}
{"op":"arena_get","slot":0,"addr":"0x1000","size":256}
{"op":"arena_get","slot":1,"addr":"0x1080","size":256}
{"op":"fn_exit"}
{"op":"read","addr":"0x1000"}
{"op":"read","addr":"0x1800"}
{"op":"free","addr":"0x1000"}
{"op":"end"}`, []string{"overlap 3 0x1080", "use-after-free 5 0x1000", "leaked 0 0", "complete true"}},
		{"huge frame", hdr + `
{"op":"fn_enter","slots":1000000000}
{"op":"arena_get","slot":999999999,"addr":"0x1000","size":8,"var":"v"}
{"op":"read","addr":"0x1000","var":"v"}
{"op":"fn_exit"}
{"op":"end"}`, []string{"leaked 0 0", "complete true"}},
	})
}

func TestDevice(t *testing.T) {
	runScenarios(t, []scenario{
		{"clean", hdr + `
{"op":"dev_malloc","addr":"0x7f0000000000","size":1048576}
{"op":"pool_get","addr":"0x7f0000000000","size":512}
{"op":"pool_get","addr":"0x7f0000000200","size":512}
{"op":"write","addr":"0x7f0000000200","size":512,"space":"device"}
{"op":"pool_put","addr":"0x7f0000000000"}
{"op":"pool_put","addr":"0x7f0000000200"}
{"op":"read","addr":"0x7f0000080000","space":"device"}
{"op":"dev_free","addr":"0x7f0000000000"}
{"op":"end"}`, []string{"leaked 0 0", "complete true"}},
		{"double put and use after put", hdr + `
{"op":"dev_malloc","addr":"0x10000","size":65536}
{"op":"pool_get","addr":"0x10000","size":512}
{"op":"pool_put","addr":"0x10000"}
{"op":"read","addr":"0x10010","space":"device"}
{"op":"pool_put","addr":"0x10000"}
{"op":"read","addr":"0x10010"}
{"op":"end"}`, []string{"use-after-free 3 0x10010", "double-free 4 0x10000", "invalid-address 5 0x10010",
			"leaked 0 0", "complete true"}},
		{"pool block outside every segment", hdr + `
{"op":"dev_malloc","addr":"0x10000","size":4096}
{"op":"pool_get","addr":"0x20000","size":512}
{"op":"pool_get","addr":"0x10f00","size":512}
{"op":"pool_put","addr":"0x20000"}
{"op":"pool_put","addr":"0x10f00"}
{"op":"end"}`, []string{"invalid-address 1 0x20000", "invalid-address 2 0x10f00", "leaked 0 0", "complete true"}},
		{"segment freed under its pool blocks", hdr + `
{"op":"dev_malloc","addr":"0x10000","size":4096}
{"op":"pool_get","addr":"0x10000","size":512}
{"op":"dev_free","addr":"0x10000"}
{"op":"pool_put","addr":"0x10000"}
{"op":"pool_get","addr":"0x10000","size":512}
{"op":"dev_free","addr":"0x10000"}
{"op":"end"}`, []string{"double-free 3 0x10000", "use-after-free 4 0x10000", "invalid-address 5 0x10000",
			"leak 6 0x10000", "leaked 1 512", "complete true"}},
		{"overlaps", hdr + `
{"op":"dev_malloc","addr":"0x10000","size":4096}
{"op":"dev_malloc","addr":"0x10800","size":4096}
{"op":"pool_get","addr":"0x10000","size":512}
{"op":"pool_get","addr":"0x10100","size":512}
{"op":"end"}`, []string{"overlap 1 0x10800", "overlap 3 0x10100", "leak 4 0x10000", "leak 4 0x10100",
			"leaked 2 1024", "complete true"}},
	})
}
