package gpu

// Stat is one counter of torch.cuda.memory_stats(): its current value, its
// peak, and the totals ever added and taken away, so that
// Allocated - Freed == Current always holds.
type Stat struct {
	Current, Peak, Allocated, Freed int64
}

func (s *Stat) increase(n int64) {
	s.Current += n
	s.Peak = max(s.Peak, s.Current)
	s.Allocated += n
}

func (s *Stat) decrease(n int64) {
	s.Current -= n
	s.Freed += n
}

// change applies a signed amount, as PyTorch's free_block does with its
// net changes of the inactive split counters.
func (s *Stat) change(n int64) {
	if n > 0 {
		s.increase(n)
	} else if n < 0 {
		s.decrease(-n)
	}
}

// StatArray is a Stat for all pools together and for each pool, the
// three rows "all", "small_pool" and "large_pool" of memory_stats().
type StatArray struct {
	All, Small, Large Stat
}

// add applies n to All and to the row of pool p, as PyTorch's
// for_each_selected_stat_type does with a block's stat types.
func (a *StatArray) add(small bool, n int64) {
	a.All.change(n)
	if small {
		a.Small.change(n)
	} else {
		a.Large.change(n)
	}
}

// Stats are the caching allocator's counters, named and computed as
// torch.cuda.memory_stats() names and computes them
// (c10/cuda/CUDACachingAllocator.cpp, DeviceStats).
type Stats struct {
	Allocation         StatArray // blocks handed out to users
	Segment            StatArray // segments reserved with cudaMalloc
	Active             StatArray // blocks handed out or waiting for a stream's events
	InactiveSplit      StatArray // free blocks that are a part of a split segment
	AllocatedBytes     StatArray
	ReservedBytes      StatArray
	ActiveBytes        StatArray
	InactiveSplitBytes StatArray
	RequestedBytes     StatArray // bytes users asked for, before rounding

	NumAllocRetries int64 // mallocs that freed the cache and tried again
	NumOOMs         int64 // mallocs that failed
	NumDeviceAlloc  int64 // cudaMalloc calls that succeeded
	NumDeviceFree   int64 // cudaFree calls
}

// Map returns the stats as the flat dictionary torch.cuda.memory_stats()
// returns: "allocated_bytes.all.current" and so on.
func (s Stats) Map() map[string]int64 {
	m := map[string]int64{
		"num_alloc_retries": s.NumAllocRetries,
		"num_ooms":          s.NumOOMs,
		"num_device_alloc":  s.NumDeviceAlloc,
		"num_device_free":   s.NumDeviceFree,
	}
	for _, a := range []struct {
		name string
		arr  *StatArray
	}{
		{"allocation", &s.Allocation}, {"segment", &s.Segment}, {"active", &s.Active},
		{"inactive_split", &s.InactiveSplit}, {"allocated_bytes", &s.AllocatedBytes},
		{"reserved_bytes", &s.ReservedBytes}, {"active_bytes", &s.ActiveBytes},
		{"inactive_split_bytes", &s.InactiveSplitBytes}, {"requested_bytes", &s.RequestedBytes},
	} {
		for _, p := range []struct {
			name string
			st   *Stat
		}{{"all", &a.arr.All}, {"small_pool", &a.arr.Small}, {"large_pool", &a.arr.Large}} {
			m[a.name+"."+p.name+".current"] = p.st.Current
			m[a.name+"."+p.name+".peak"] = p.st.Peak
			m[a.name+"."+p.name+".allocated"] = p.st.Allocated
			m[a.name+"."+p.name+".freed"] = p.st.Freed
		}
	}
	return m
}
