"""Writes a large snapshot of realistic shape, for benchmarks and reports.

    python3 make_big_snapshot.py ENTRIES OUT.pickle

A trace of ENTRIES entries (alloc, free_requested, free_completed in
turn), each with a stack of 12 frames as _record_memory_history(
stacks="python") records them: frame dicts made afresh for each entry, with
filenames shared (as Python shares the str objects of one code object),
so that pickle writes each once and refers to it after, and function names
made afresh, so that pickle writes them each time. 60,000 entries make about 33 MB. Nothing is committed: reports/gen
and the benchmarks run this script into a temporary folder.
"""
import pickle
import sys

n = int(sys.argv[1])
files = [f"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/mod{i}.py" for i in range(40)]
names = [f"Module.forward_{i}" for i in range(200)]
SEG = 0x7F0000000000
seg_size = 1 << 30
traces = []
live = {}
t = 1_700_000_000_000_000
for i in range(n):
    stack = [{"filename": files[(i * 7 + k) % 40], "line": 10 + (i * 13 + k * 17) % 4000,
              "name": f"torch.nn.{names[(i + k) % 200]}_{k}"} for k in range(12)]
    slot = i % 512
    addr = SEG + slot * (1 << 20)
    if slot in live:
        a = live.pop(slot)
        traces.append({"action": "free_requested", "addr": a, "size": 4096, "stream": 0,
                       "time_us": t, "frames": stack})
        t += 1
        traces.append({"action": "free_completed", "addr": a, "size": 4096, "stream": 0,
                       "time_us": t, "frames": stack})
    else:
        live[slot] = addr
        traces.append({"action": "alloc", "addr": addr, "size": 4096, "stream": 0,
                       "time_us": t, "frames": stack})
    t += 1
    if len(traces) >= n:
        break
blocks = []
for slot in range(1024):
    blocks.append({"address": SEG + slot * (1 << 20), "size": 1 << 20,
                   "state": "active_allocated" if slot in live else "inactive",
                   "frames": []})
snap = {"segments": [{"device": 0, "address": SEG, "total_size": seg_size, "stream": 0,
                      "segment_type": "large", "frames": [], "blocks": blocks}],
        "device_traces": [traces],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1}}
with open(sys.argv[2], "wb") as f:
    pickle.dump(snap, f, protocol=4)
