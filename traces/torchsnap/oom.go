package torchsnap

// OOM is one oom entry of a snapshot: a malloc that PyTorch's caching
// allocator refused after freeing its cache, as
// torch.cuda.memory._record_memory_history records it. It yields no event
// (it changes no memory); Event says where it stands among the events.
type OOM struct {
	// Event is the number of the event it came before: the events before
	// it are what was reserved and allocated when it happened.
	Event int
	// Size is the request, rounded as the allocator rounds it (PyTorch
	// writes the rounded size).
	Size uint64
	// DeviceFree is what cudaMemGetInfo said was free on the device then
	// (PyTorch writes it as the entry's addr): with what the process had
	// reserved, the most it could have reserved.
	DeviceFree uint64
	// Stream is the request's stream, as the snapshot writes it (a CUDA
	// stream handle; 0 is the default stream).
	Stream int64
	Site   string // as an event's site
	T      int64  // ns; 0 if the entry has no time
	// Stack is the request's Python frames, innermost first, where the
	// reader keeps stacks (Limits.Stacks).
	Stack []Frame
}

func (r *Reader) oomOf(e *entry, event int) OOM {
	return OOM{Event: event, Size: e.size, DeviceFree: e.addr, Stream: e.stream, Site: r.sh.site(e.site), T: e.t, Stack: r.sh.stack(e.site)}
}

// OOMs returns the snapshot's oom entries, oldest first.
func (r *Reader) OOMs() []OOM { return r.ooms }
