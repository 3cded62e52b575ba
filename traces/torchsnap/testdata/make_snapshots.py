"""Writes the test snapshots in this folder with Python's own pickle.

The dicts have the shape torch.cuda.memory._snapshot() returns (segments,
device_traces, frames, time_us; see torch/cuda/memory.py), built by hand so
that no GPU or PyTorch is needed. Run from this folder:

    python3 make_snapshots.py

and commit the .pickle files it writes. The tests read them; they never
run this script.
"""
import pickle

MiB = 1 << 20
SEG = 0x7F0000000000          # a segment's address, as CUDA hands them out
FR_MODEL = [{"filename": "train.py", "line": 42, "name": "forward"},
            {"filename": "train.py", "line": 90, "name": "main"}]
FR_LOSS = [{"filename": "train.py", "line": 51, "name": "loss"}]
# With stacks="all" the innermost frames are C++; memory_viz hides these.
FR_CPP = [{"filename": "??", "line": 0, "name": "CapturedTraceback::gather"},
          {"filename": "opt.py", "line": 7, "name": "step"}]


# PyTorch shares one frames list among all the entries and blocks with the
# same stack, so pickle writes it once and refers to it after (BINGET):
# the frames lists here are shared the same way, not copied.
def entry(action, addr, size, frames=[], stream=0, t=0):
    return {"action": action, "addr": addr, "size": size, "stream": stream,
            "frames": frames, "time_us": 1_700_000_000_000_000 + t}


def block(addr, size, state, frames=[]):
    return {"address": addr, "size": size, "requested_size": size,
            "state": state, "frames": frames}


def segment(addr, size, blocks, frames=[]):
    allocated = sum(b["size"] for b in blocks if b["state"] != "inactive")
    return {"device": 0, "address": addr, "total_size": size,
            "allocated_size": allocated, "active_size": allocated,
            "requested_size": allocated, "stream": 0,
            "segment_type": "large", "segment_pool_id": (0, 0),
            "is_expandable": False, "frames": frames, "blocks": blocks}


def settings():
    return {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
            "expandable_segments": False}


# clean: a training step. One weight block was allocated before recording
# began (it is in segments at the end but has no alloc entry); activations
# come and go, one is freed on a side stream (free_requested, then
# free_completed later); one block is still allocated when the snapshot is
# taken: live, not leaked.
A = SEG + 2 * MiB
B = SEG + 4 * MiB
C = SEG + 6 * MiB
clean = {
    "segments": [segment(SEG, 20 * MiB, [
        block(SEG, 2 * MiB, "active_allocated", FR_MODEL),
        block(A, 2 * MiB, "inactive"),
        block(B, 2 * MiB, "active_allocated", FR_LOSS),
        block(C, 14 * MiB, "inactive"),
    ])],
    "device_traces": [[
        entry("alloc", A, 2 * MiB, FR_MODEL, t=10),
        entry("alloc", C, 512, FR_CPP, stream=94, t=11),
        entry("free_requested", C, 512, FR_CPP, stream=94, t=12),
        entry("alloc", B, 2 * MiB, FR_LOSS, t=13),
        entry("free_requested", A, 2 * MiB, FR_MODEL, t=14),
        entry("free_completed", A, 2 * MiB, FR_MODEL, t=15),
        entry("free_completed", C, 512, FR_CPP, stream=94, t=16),
        entry("oom", 0, 64 * MiB, t=17) | {"device_free": 0},
        entry("segment_alloc", SEG + 20 * MiB, 2 * MiB, FR_LOSS, t=18),
        entry("segment_free", SEG + 20 * MiB, 2 * MiB, t=19),
        entry("snapshot", 0, 0, t=20),
    ]],
    "allocator_settings": settings(),
}
del clean["device_traces"][0][7]["addr"]  # oom has device_free, not addr

# reuse: the allocator hands out block B again before its free_completed
# (a record_stream bug): the model reports an overlap.
reuse = {
    "segments": [segment(SEG, 2 * MiB, [
        block(SEG, 1 * MiB, "active_allocated", FR_LOSS),
        block(SEG + MiB, 1 * MiB, "inactive"),
    ])],
    "device_traces": [[
        entry("segment_alloc", SEG, 2 * MiB, FR_MODEL, t=1),
        entry("alloc", SEG, MiB, FR_MODEL, t=2),
        entry("free_requested", SEG, MiB, FR_MODEL, stream=7, t=3),
        entry("alloc", SEG, MiB, FR_LOSS, t=4),
        entry("free_completed", SEG, MiB, FR_MODEL, stream=7, t=5),
    ]],
    "allocator_settings": settings(),
}

# two devices, each with its own segment; entries interleave in time.
D1 = 0x7E0000000000
twodev = {
    "segments": [segment(SEG, 2 * MiB, [block(SEG, 2 * MiB, "inactive")]),
                 dict(segment(D1, 2 * MiB, [block(D1, 2 * MiB, "inactive")]),
                      device=1)],
    "device_traces": [
        [entry("segment_alloc", SEG, 2 * MiB, t=1),
         entry("alloc", SEG, 4096, FR_MODEL, t=3),
         entry("free_completed", SEG, 4096, t=5)],
        [entry("segment_alloc", D1, 2 * MiB, t=2),
         entry("alloc", D1, 4096, FR_LOSS, t=4),
         entry("free_completed", D1, 4096, t=6)],
    ],
}

# _dump_snapshot() writes Python's default protocol: 4 from Python 3.8,
# 5 from 3.14. The clean snapshot comes in every protocol tlcheck reads.
for proto in (0, 2, 4, 5):
    with open(f"clean-p{proto}.pickle", "wb") as f:
        pickle.dump(clean, f, protocol=proto)
for name, snap in [("reuse", reuse), ("twodev", twodev)]:
    with open(f"{name}.pickle", "wb") as f:
        pickle.dump(snap, f, protocol=4)
