// Package snapgen generates realistic PyTorch memory snapshots of training
// loops, for the tests and reports of the leak-suspect detector and the
// out-of-memory explanation.
//
// Generate runs a small model's loop (Linear and ReLU layers, a head,
// cross_entropy, backward, AdamW's step and zero_grad) on impl/gpu's
// CachingAllocator, which package cudarec holds to PyTorch's, and records
// what the allocator does as _record_memory_history(stacks="python")
// would: segment_alloc, alloc, free_requested, free_completed,
// segment_free and oom entries with Python frames (file, line, function,
// innermost first), microsecond times, and at the end the segments with
// their blocks. WritePickle writes it as torch.cuda.memory._snapshot()
// pickles it in PyTorch 2.x (device_traces, segments, allocator_settings),
// which traces/torchsnap and Python's pickle both read.
//
// Three loops (Loop): Train, a normal loop that keeps nothing per step;
// KeepLoss, which keeps each step's loss (one cross_entropy block a step);
// KeepGraph, an evaluation loop that keeps each step's output and with it
// the whole forward graph. Config sizes them (steps, layers, batch, width,
// classes), varies batch rows by a seed (widely, with Spread, so that the
// cache fragments), caps the device (an oom entry
// ends the snapshot), starts the recording mid-run or keeps only the
// newest entries, as max_entries does. Snapshot.Iterations tells where
// each step began, so that a test knows the answer a detector must find.
package snapgen
