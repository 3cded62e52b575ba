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
  20 MiB pages), its blocks tiling it, mapped or not; a request takes the
  best fit among free blocks, by size and address, weighing what a block
  could grow into (get_free_block), else maps the pages it needs at the
  lowest unmapped bytes where they and a free block just before them make
  room (find_expandable_block, map_block: one segment_map entry for each
  block mapped); blocks split at any rest of 512 B, free neighbours merge;
  empty_cache unmaps the whole pages inside each free block, in the
  pool's order (release_blocks, unmap_block: one segment_unmap entry per
  block), so an unmap may take part of what one map mapped, or what
  several did; impl/gpu's CachingAllocator with ExpandableSegments follows
  the same rules;
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
EMPTY = frames((LIB + "cuda/memory.py", 222, "empty_cache"),
               ("/home/user/train.py", 64, "main"))


class Blk:
    """A block of a reservation: allocated, free (mapped) or unmapped."""

    def __init__(self, addr, size, state, fr=None):
        self.addr, self.size, self.state, self.fr = addr, size, state, fr or []
        self.prev = self.next = None


class Pool:
    """One pool's expandable segment: a reservation whose blocks, linked by
    address, tile it, mapped or not (PyTorch's Block list)."""

    def __init__(self, base, page, pages, small):
        self.base, self.page, self.pages, self.small = base, page, pages, small
        self.head = None

    def reserve(self):
        self.head = Blk(self.base, self.page * self.pages, "unmapped")

    def blocks(self):
        b = self.head
        while b:
            yield b
            b = b.next

    def free_sorted(self):
        """The free blocks as PyTorch's pool keeps them: by size, then address."""
        return sorted((b for b in self.blocks() if b.state == "free"), key=lambda b: (b.size, b.addr))


def splice_after(b, n):
    """Links n right after b."""
    n.prev, n.next = b, b.next
    if b.next:
        b.next.prev = n
    b.next = n


def merge(pool, dst, src):
    """try_merge_blocks: src, a neighbour of dst in the same state, joins it."""
    if src is None or src.state != dst.state or dst.state == "alloc":
        return
    if src is dst.prev:
        dst.addr = src.addr
        dst.prev = src.prev
        if dst.prev:
            dst.prev.next = dst
        else:
            pool.head = dst
    else:
        dst.next = src.next
        if dst.next:
            dst.next.prev = dst
    dst.size += src.size


class Allocator:
    def __init__(self):
        self.trace = []
        self.t = 0
        # Reservations as CUDA places them, far apart (cuMemAddressReserve).
        self.small = Pool(0x7F3A00000000, 2 * MiB, 64, True)
        self.large = Pool(0x7F3C00000000, 20 * MiB, 64, False)
        self.recording = False

    def rec(self, action, addr, size, fr, stream=0):
        self.t += 7
        if self.recording:
            self.trace.append({"action": action, "addr": addr, "size": size,
                               "stream": stream, "time_us": T0 + self.t,
                               "compile_context": "N/A", "user_metadata": "",
                               "frames": fr})

    def malloc(self, n, fr):
        size = max(512, (n + 511) // 512 * 512)
        p = self.small if size <= MiB else self.large
        b = self.free_block(p, size) or self.expandable_block(p, size, fr)
        if b.size - size >= 512:  # should_split under expandable segments
            rest = Blk(b.addr + size, b.size - size, "free")
            splice_after(b, rest)
            b.size = size
        b.state, b.fr = "alloc", fr
        self.rec("alloc", b.addr, size, fr)
        return b.addr

    def free_block(self, p, size):
        """get_free_block: the best fit, weighing what a block could grow
        into (its size and the unmapped bytes right after it)."""
        fits = [b for b in p.free_sorted() if b.size >= size]
        if not fits:
            return None
        room = lambda b: b.size + (b.next.size if b.next and b.next.state == "unmapped" else 0)
        i = 0
        while i + 1 < len(fits) and room(fits[i + 1]) < room(fits[i]):
            i += 1
        return fits[i]

    def expandable_block(self, p, size, fr):
        """find_expandable_block, try_allocate_expandable_block."""
        if p.head is None:
            p.reserve()
        def room(b):
            got = 0
            while b and got < size and b.state != "alloc":
                got += b.size
                b = b.next
            return got >= size
        c = None
        for u in p.blocks():
            if u.state != "unmapped":
                continue
            c = u.prev if u.prev and u.prev.state == "free" else u
            if room(c):
                break
            c = None
        if c.state == "unmapped":
            c = self.map(p, c, min(c.size, size), fr)
        while c.size < size:
            c = self.map(p, c.next, min(size - c.size, c.next.size), fr)
        return c

    def map(self, p, u, n, fr):
        """map_block: map the pages holding the first n bytes of u."""
        m = min(-(-n // p.page) * p.page, u.size)
        if m < u.size:
            splice_after(u, Blk(u.addr + m, u.size - m, "unmapped"))
            u.size = m
        u.state = "free"
        self.rec("segment_map", u.addr, m, fr)
        merge(p, u, u.prev)
        merge(p, u, u.next)
        return u

    def free(self, addr):
        for p in (self.small, self.large):
            for b in p.blocks():
                if b.addr == addr and b.state == "alloc":
                    self.rec("free_requested", addr, b.size, b.fr)
                    self.rec("free_completed", addr, b.size, b.fr)
                    b.state, b.fr = "free", []
                    merge(p, b, b.prev)
                    merge(p, b, b.next)
                    return
        raise KeyError(hex(addr))

    def empty_cache(self, fr):
        """release_blocks for each pool: the whole pages inside each free
        block, in the pool's order, unmapped (unmap_block)."""
        for p in (self.small, self.large):
            for b in p.free_sorted():
                lo = p.base + -(-(b.addr - p.base) // p.page) * p.page
                hi = p.base + (b.addr + b.size - p.base) // p.page * p.page
                if lo >= hi:
                    continue
                if lo > b.addr:
                    before = Blk(b.addr, lo - b.addr, "free")
                    before.prev, before.next = b.prev, b
                    if b.prev:
                        b.prev.next = before
                    else:
                        p.head = before
                    b.prev = before
                if hi < b.addr + b.size:
                    splice_after(b, Blk(hi, b.addr + b.size - hi, "free"))
                b.addr, b.size, b.state = lo, hi - lo, "unmapped"
                self.rec("segment_unmap", lo, hi - lo, fr)
                merge(p, b, b.prev)
                merge(p, b, b.next)
            if p.head and p.head.next is None and p.head.state == "unmapped":
                p.head = None  # the reservation goes back

    def segments(self):
        """One segment for each contiguous mapped run, as PyTorch reports
        expandable segments."""
        out = []
        for p, kind in ((self.small, "small"), (self.large, "large")):
            run = []
            for b in list(p.blocks()) + [None]:
                if b is not None and b.state != "unmapped":
                    run.append(b)
                    continue
                if run:
                    blocks = [block(x.addr, x.size, "active_allocated" if x.state == "alloc" else "inactive", x.fr)
                              for x in run]
                    allocated = sum(x.size for x in run if x.state == "alloc")
                    total = sum(x.size for x in run)
                    out.append({"device": 0, "address": run[0].addr, "total_size": total,
                                "allocated_size": allocated, "active_size": allocated,
                                "requested_size": allocated, "stream": 0,
                                "segment_type": kind, "segment_pool_id": (0, 0),
                                "is_expandable": True, "frames": run[0].fr,
                                "blocks": blocks})
                    run = []
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
    for step in range(5):
        # Sequence lengths vary from batch to batch, and so do the sizes.
        grow = (step % 3) * 3 * MiB
        x = al.malloc(4 * MiB + grow // 8, BATCH)
        acts = [al.malloc(32 * MiB + grow, LINEAR), al.malloc(30 * MiB + grow, GELU),
                al.malloc(9 * MiB + grow // 2, LINEAR)]
        loss = al.malloc(512, LOSS)
        grads = [al.malloc(n, BACKWARD) for n in (24 * MiB, 6 * MiB, 512 * KiB, 96 * KiB)]
        for a in reversed(acts):
            al.free(a)
        if step == 0:  # AdamW's state, made at the first step and kept
            state = [al.malloc(n, ADAMW) for n in (24 * MiB, 24 * MiB, 6 * MiB, 6 * MiB)]
        for g in grads:
            al.free(g)
        al.free(loss)
        if step in (1, 3):
            # torch.cuda.empty_cache() with the batch still held: the
            # whole pages of free blocks are unmapped, the rest stays.
            al.empty_cache(EMPTY)
        al.free(x)
    if bug:
        # A block handed out in bytes the allocator unmapped: the page
        # table says the bytes are not there.
        al.empty_cache(EMPTY)
        p = al.large
        hole = next(b.addr for b in p.blocks() if b.state == "unmapped" and b.prev)
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
