"""Writes snapshots of a training loop under expandable segments.

    python3 make_expandable_snapshot.py

writes expandable.pickle (clean) and expandable-bug.pickle (a block handed
out in bytes the allocator had unmapped). No GPU or PyTorch is needed: a
small simulation of PyTorch 2.x's caching allocator with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (c10/cuda/
CUDACachingAllocator.cpp) runs the allocations of a few training steps and
writes what torch.cuda.memory._snapshot() returns, with the keys, types
and order of PyTorch 2.11's dicts (torch/csrc/cuda/Module.cpp):

- one reservation of addresses per pool (small: 2 MiB pages, large:
  20 MiB pages); allocating maps the pages a block needs at the lowest
  address where free and unmapped bytes make room, each contiguous run of
  new pages one segment_map entry (map_block); empty_cache unmaps the
  whole pages inside each free block, one segment_unmap entry per block
  (release_blocks, unmap_block): an unmap may take part of what one map
  mapped, or what several did;
- frees are free_requested then free_completed; recording starts after the
  model's weights are made (so the weights' blocks have no frames, and the
  trace's start is rebuilt from segments);
- the snapshot's segments are one dict for each contiguous mapped range,
  "is_expandable": True, blocks tiling it (active_allocated or inactive).

The tests read the .pickle files; they never run this script.
"""
import pickle
import sys

KiB, MiB = 1 << 10, 1 << 20
T0 = 1_764_000_000_000_000  # time_us of the first entry


def frames(*sites):
    """A stacks="python" frames list, innermost first."""
    return [{"filename": f, "line": l, "name": n} for f, l, n in sites]


LIB = "/usr/lib/python3/dist-packages/torch/"
LINEAR = frames((LIB + "nn/modules/linear.py", 125, "forward"),
                (LIB + "nn/modules/module.py", 1762, "_call_impl"),
                ("/home/user/train.py", 31, "forward"),
                ("/home/user/train.py", 58, "train_step"))
GELU = frames((LIB + "nn/functional.py", 1741, "gelu"),
              ("/home/user/train.py", 32, "forward"),
              ("/home/user/train.py", 58, "train_step"))
LOSS = frames((LIB + "nn/functional.py", 3494, "cross_entropy"),
              ("/home/user/train.py", 59, "train_step"))
BACKWARD = frames((LIB + "_tensor.py", 648, "backward"),
                  ("/home/user/train.py", 60, "train_step"))
ADAMW = frames((LIB + "optim/adamw.py", 419, "_single_tensor_adamw"),
               ("/home/user/train.py", 61, "train_step"))
BATCH = frames(("/home/user/train.py", 55, "train_step"))


class Pool:
    """One expandable segment: a reservation whose pages are mapped on
    demand."""

    def __init__(self, base, page, pages, stream=0):
        self.base, self.page, self.end = base, page, base + page * pages
        self.mapped = set()  # page numbers
        self.blocks = {}     # addr -> (size, frames): allocated blocks
        self.stream = stream

    def is_mapped(self, lo, hi):
        return all(p in self.mapped for p in range((lo - self.base) // self.page,
                                                   (hi - self.base - 1) // self.page + 1))

    def gaps(self):
        """The free address ranges (mapped or not) between blocks."""
        at = self.base
        for a in sorted(self.blocks):
            if a > at:
                yield at, a
            at = a + self.blocks[a][0]
        if at < self.end:
            yield at, self.end


class Allocator:
    def __init__(self):
        self.trace = []
        self.t = 0
        # Reservations as CUDA places them, far apart (cuMemAddressReserve).
        self.small = Pool(0x7F3A00000000, 2 * MiB, 64)
        self.large = Pool(0x7F3C00000000, 20 * MiB, 64)
        self.recording = False

    def rec(self, action, addr, size, fr, stream=0):
        self.t += 7
        if self.recording:
            self.trace.append({"action": action, "addr": addr, "size": size,
                               "stream": stream, "time_us": T0 + self.t,
                               "compile_context": "N/A", "user_metadata": "",
                               "frames": fr})

    def pool(self, size):
        return self.small if size <= MiB else self.large

    def malloc(self, n, fr):
        size = max(512, (n + 511) // 512 * 512)
        p = self.pool(size)
        # A free mapped block first (the allocator's pools), else the
        # lowest free range that mapping pages can complete.
        choice = None
        for lo, hi in p.gaps():
            if hi - lo >= size and p.is_mapped(lo, lo + size):
                choice = lo
                break
        if choice is None:
            for lo, hi in p.gaps():
                if hi - lo >= size:
                    choice = lo
                    break
            self.map(p, choice, choice + size, fr)
        p.blocks[choice] = (size, fr)
        self.rec("alloc", choice, size, fr)
        return choice

    def map(self, p, lo, hi, fr):
        first = (lo - p.base) // p.page
        last = (hi - p.base - 1) // p.page
        run = None
        for pg in list(range(first, last + 1)) + [None]:
            if pg is not None and pg not in p.mapped:
                p.mapped.add(pg)
                run = (run[0], pg) if run else (pg, pg)
                continue
            if run:
                self.rec("segment_map", p.base + run[0] * p.page,
                         (run[1] - run[0] + 1) * p.page, fr)
                run = None

    def free(self, addr):
        p = self.small if addr in self.small.blocks else self.large
        size, fr = p.blocks.pop(addr)
        self.rec("free_requested", addr, size, fr)
        self.rec("free_completed", addr, size, fr)

    def empty_cache(self):
        for p in (self.small, self.large):
            for lo, hi in list(p.gaps()):
                # the whole mapped pages inside the free block
                a = -(-(lo - p.base) // p.page)
                b = (hi - p.base) // p.page
                run = None
                for pg in list(range(a, b)) + [None]:
                    if pg is not None and pg in p.mapped:
                        run = (run[0], pg) if run else (pg, pg)
                        continue
                    if run:
                        for q in range(run[0], run[1] + 1):
                            p.mapped.discard(q)
                        self.rec("segment_unmap", p.base + run[0] * p.page,
                                 (run[1] - run[0] + 1) * p.page, [])
                        run = None

    def segments(self):
        out = []
        for p, kind in ((self.small, "small"), (self.large, "large")):
            pages = sorted(p.mapped)
            runs = []
            for pg in pages:
                if runs and runs[-1][1] == pg - 1:
                    runs[-1][1] = pg
                else:
                    runs.append([pg, pg])
            for r0, r1 in runs:
                lo, hi = p.base + r0 * p.page, p.base + (r1 + 1) * p.page
                blocks, at = [], lo
                for a in sorted(x for x in p.blocks if lo <= x < hi):
                    size, fr = p.blocks[a]
                    if a > at:
                        blocks.append(block(at, a - at, "inactive", []))
                    blocks.append(block(a, size, "active_allocated", fr))
                    at = a + size
                if at < hi:
                    blocks.append(block(at, hi - at, "inactive", []))
                allocated = sum(b["size"] for b in blocks if b["state"] != "inactive")
                head = blocks[0]["frames"] if blocks[0]["state"] != "inactive" else []
                out.append({"device": 0, "address": lo, "total_size": hi - lo,
                            "allocated_size": allocated, "active_size": allocated,
                            "requested_size": allocated, "stream": p.stream,
                            "segment_type": kind, "segment_pool_id": (0, 0),
                            "is_expandable": True, "frames": head,
                            "blocks": blocks})
        out.sort(key=lambda s: s["address"])
        return out


def block(addr, size, state, fr):
    return {"address": addr, "size": size, "requested_size": size,
            "state": state, "frames": fr}


def run(bug=False):
    al = Allocator()
    # The model's weights, made before recording starts.
    weights = [al.malloc(n, []) for n in (24 * MiB, 6 * MiB, 512 * KiB, 96 * KiB)]
    torch_record_memory_history(al)
    state = []
    for step in range(4):
        x = al.malloc(4 * MiB, BATCH)
        acts = [al.malloc(32 * MiB, LINEAR), al.malloc(32 * MiB, GELU),
                al.malloc(8 * MiB, LINEAR)]
        loss = al.malloc(512, LOSS)
        grads = [al.malloc(n, BACKWARD) for n in (24 * MiB, 6 * MiB, 512 * KiB, 96 * KiB)]
        for a in reversed(acts):
            al.free(a)
        if step == 0:  # AdamW's state, made at the first step and kept
            state = [al.malloc(n, ADAMW) for n in (24 * MiB, 24 * MiB, 6 * MiB, 6 * MiB)]
        for g in grads:
            al.free(g)
        al.free(loss)
        al.free(x)
        if step == 1:
            al.empty_cache()  # torch.cuda.empty_cache(): unmaps free pages
    if bug:
        # A block handed out in bytes the allocator unmapped: the page
        # table says the bytes are not there.
        al.empty_cache()
        p = al.large
        hole = p.base + p.page * next(pg for pg in range(64) if pg not in p.mapped)
        al.rec("alloc", hole, 4 * MiB, BATCH)
    snap = {"segments": al.segments(), "device_traces": [al.trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
                                   "expandable_segments": True},
            "external_annotations": []}
    return snap, weights, state


def torch_record_memory_history(al):
    al.recording = True


if __name__ == "__main__":
    for name, bug in (("expandable.pickle", False), ("expandable-bug.pickle", True)):
        snap, _, _ = run(bug)
        with open(name, "wb") as f:
            pickle.dump(snap, f, protocol=4)
        print(name, len(snap["device_traces"][0]), "entries,",
              len(snap["segments"]), "segments", file=sys.stderr)
