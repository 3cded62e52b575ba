package model

// DeviceBytes is a trace's device memory in the two measures PyTorch
// users know: allocated, the bytes of the pool blocks handed out
// (torch.cuda.memory_allocated), and reserved, the bytes of the segments
// and mapped ranges the pool holds (torch.cuda.memory_reserved), each at
// its peak and after the last event. A view fills it from a Watch's Born
// and Died, so its numbers are the model's lives, not a second reading of
// the trace.
type DeviceBytes struct {
	PeakAllocated, Allocated uint64
	PeakReserved, Reserved   uint64
}

// Born counts a thing made; things of the heap are not counted.
func (d *DeviceBytes) Born(t Thing) {
	switch t.Kind {
	case PoolBlock:
		d.Allocated += t.Size
		d.PeakAllocated = max(d.PeakAllocated, d.Allocated)
	case Segment, Mapping:
		d.Reserved += t.Size
		d.PeakReserved = max(d.PeakReserved, d.Reserved)
	}
}

// Died counts a thing's death.
func (d *DeviceBytes) Died(t Thing) {
	switch t.Kind {
	case PoolBlock:
		d.Allocated -= t.Size
	case Segment, Mapping:
		d.Reserved -= t.Size
	}
}

// Used reports whether the trace reserved device memory at all.
func (d *DeviceBytes) Used() bool { return d.PeakReserved > 0 || d.PeakAllocated > 0 }
