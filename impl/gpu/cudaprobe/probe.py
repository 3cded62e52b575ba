#!/usr/bin/env python3
"""Run random programs of PyTorch's CUDA caching allocator on a real GPU.

Each program is a list of steps (malloc of n bytes on a stream, free,
record_stream, stream synchronize, empty_cache); after every step the probe
reads torch.cuda.memory_stats() and torch.cuda.memory_snapshot() and writes
what the allocator did, one JSON line a program, so that a Go test can
replay the same steps on impl/gpu and compare (impl/gpu/cudarec).

    python3 probe.py --out DIR [--budget SECONDS]   # needs torch with CUDA
    python3 probe.py --out DIR --dry-run            # no GPU: fakes the device

One child process runs each configuration, since PYTORCH_CUDA_ALLOC_CONF is
read once, when CUDA initialises. Capacity is set per program with
torch.cuda.set_per_process_memory_fraction, whose cap (allowed_memory_maximum
= fraction * total) is arithmetic, so out-of-memory and retries are
deterministic. Blocks freed while other streams use them stay pending until
an event on those streams completes: the probe keeps a long
torch.cuda._sleep queued on streams 1 and 2, so that an event completes
only when the stream is synchronized, or when the device is (cudaFree), and
it records which streams finished their work during each step.
"""

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time

MiB = 1 << 20

# The counters of torch.cuda.memory_stats() that impl/gpu's Stats.Map has,
# in the order the recording's stats arrays use.
ARRAYS = ["allocation", "segment", "active", "inactive_split", "allocated_bytes",
          "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"]
POOLS = ["all", "small_pool", "large_pool"]
FIELDS = ["current", "peak", "allocated", "freed"]
KEYS = ["num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"] + [
    f"{a}.{p}.{f}" for a in ARRAYS for p in POOLS for f in FIELDS]

# Configurations, one process each: name, PYTORCH_CUDA_ALLOC_CONF, the
# families of random programs (family -> count) and the share of --budget.
# A configuration with no families only tries one allocation and records
# whether PyTorch takes the setting.
CONFIGS = [
    ("default", "", {"roomy": 150, "tight": 150, "streams": 60, "smallpool": 100, "pending": 60}, 0.40),
    ("split24", "max_split_size_mb:24", {"split": 110, "splitstreams": 40}, 0.22),
    ("split22", "max_split_size_mb:22", {"split": 60, "splitstreams": 20}, 0.14),
    ("split20", "max_split_size_mb:20", {"split": 80, "splitstreams": 30}, 0.18),
    ("conf20", "max_split_size_mb:20", None, 0.01),
    ("conf19", "max_split_size_mb:19", None, 0.01),
    ("conf8", "max_split_size_mb:8", None, 0.01),
]


def named_programs(config):
    """Issue 20's cases and the rows of impl/gpu's release_test.go, as
    programs: ("named", name, capacity, steps)."""
    def m(mib, stream=0):
        return ("malloc", mib * MiB, stream)
    out = []
    if config == "default":
        out += [
            ("cap-exact", 64 * MiB, [m(64), ("free", 0), ("malloc", 64 * MiB + 1, 0)]),
            ("one-eib", 64 * MiB, [("malloc", 512, 0), ("free", 0), ("malloc", 1 << 60, 0),
                                   ("malloc", (1 << 60) + 12345, 0), ("malloc", 1 << 62, 0),
                                   ("malloc", (1 << 60) - 1, 0)]),
            ("no-split-straight-to-release-cached", 48 * MiB,
             [m(24), m(24), ("free", 0), ("free", 1), m(5, 1)]),
            ("zero-bytes", 64 * MiB, [("malloc", 0, 0), m(1), ("free", 1), ("free", 0)]),
            ("pending-until-sync", 64 * MiB,
             [m(30), ("record", 0, 1), ("free", 0), m(30), ("sync", 1), m(30), ("empty",)]),
            ("pending-through-retry", 64 * MiB,
             [m(30), ("record", 0, 2), ("free", 0), m(30), m(30)]),
        ]
    if config == "split24":
        out += [
            ("issue20-one-oversize-block", 48 * MiB, [m(24), m(24), ("free", 0), ("free", 1), m(5)]),
            ("issue20-pending-stays-pending", 50 * MiB,
             [m(24), m(24), ("malloc", 512, 0), ("record", 2, 1), ("free", 2), ("free", 0), ("free", 1), m(5)]),
            ("smallest-oversize-alone", 94 * MiB,
             [m(28), m(40), m(26), ("free", 0), ("free", 1), ("free", 2), m(5)]),
            ("largest-first-until-enough", 78 * MiB,
             [m(24), m(28), m(26), ("free", 0), ("free", 1), ("free", 2), m(40)]),
            ("not-enough-then-whole-cache", 64 * MiB,
             [m(26), m(30), ("malloc", 512, 0), ("free", 0), ("free", 2), m(28)]),
            ("other-stream-left-to-release-cached", 48 * MiB,
             [m(24, 1), ("free", 0), m(24), m(5)]),
            ("largest-first-stops-at-other-stream", 84 * MiB,
             [m(28), m(30), m(26, 1), ("free", 0), ("free", 1), ("free", 2), m(40, 1)]),
        ]
    if config == "split20":
        out += [
            ("twenty-mib-segment-is-oversize", 44 * MiB,
             [m(5), ("free", 0), m(5), m(5), ("free", 1), ("free", 2), m(30)]),
            ("twenty-mib-request-not-split", 64 * MiB, [m(20), ("free", 0), m(12), m(20)]),
        ]
    if config == "split22":
        out += [("small-request-no-oversize-in-small-pool", 44 * MiB,
                 [m(22), m(22), ("free", 0), ("malloc", 512, 0)])]
    progs = []
    for name, cap, steps in out:
        progs.append(("named", name, cap, to_ops(steps)))
    return progs


def to_ops(steps):
    """Tuples to step dicts; free and record name a malloc by its index
    among the program's mallocs."""
    ops, mallocs = [], 0
    for s in steps:
        if s[0] == "malloc":
            ops.append({"op": "malloc", "size": s[1], "stream": s[2], "id": mallocs})
            mallocs += 1
        elif s[0] == "free":
            ops.append({"op": "free", "id": s[1]})
        elif s[0] == "record":
            ops.append({"op": "record", "id": s[1], "stream": s[2]})
        elif s[0] == "sync":
            ops.append({"op": "sync", "stream": s[1]})
        else:
            ops.append({"op": "empty"})
    return ops


def draw_size(rng, max_split):
    r = rng.random()
    if r < 0.01:
        return 0
    if r < 0.41:
        return rng.choice([
            lambda: rng.randint(1, 4096),
            lambda: rng.randint(1, MiB),
            lambda: 512 * rng.randint(1, 2048),
            lambda: MiB,
            lambda: MiB + rng.choice([1, 511, 512, 513]),
        ])()
    if r < 0.71:
        return rng.randint(MiB + 1, 10 * MiB)
    if r < 0.93 or not max_split:
        return rng.choice([
            lambda: rng.randint(10 * MiB, 40 * MiB),
            lambda: 10 * MiB + rng.choice([-512, -1, 0, 1]),
            lambda: 2 * MiB * rng.randint(5, 20),
        ])()
    return max(1, max_split + rng.choice([-MiB, -512, -1, 0, 1, 2 * MiB, 20 * MiB - 512, 20 * MiB, 21 * MiB]))


def random_program(config, family, index, max_split):
    """A random program of family, deterministic from its name."""
    name = f"{family}-{index:04d}"
    rng = random.Random(f"{config}/{name}")
    streams = family in ("streams", "splitstreams", "pending")
    if family == "roomy":
        cap = 1024 * MiB
    elif family == "tight":
        cap = rng.randint(22, 96) * MiB
    elif family == "streams":
        cap = rng.randint(40, 200) * MiB
    elif family == "pending":
        cap = rng.randint(30, 120) * MiB
    elif family == "smallpool":
        cap = rng.randint(4, 24) * MiB
    else:
        cap = rng.randint(44, 160) * MiB
    multi = streams or rng.random() < 0.4
    nsteps = rng.randint(10, 40)
    # Thresholds of one draw: malloc, free, record_stream, synchronize, else empty_cache.
    if family == "pending":
        cuts = (0.45, 0.72, 0.92, 0.97)
    elif streams:
        cuts = (0.5, 0.84, 0.92, 0.97)
    else:
        cuts = (0.52, 0.95, 0.95, 0.95)
    ops, live, mallocs = [], {}, 0  # live: malloc index -> stream
    for _ in range(nsteps):
        r = rng.random()
        size = draw_size(rng, max_split)
        if family == "smallpool" and rng.random() < 0.85:
            size = rng.choice([rng.randint(1, 8192), rng.randint(1, MiB), 512 * rng.randint(1, 2048)])
        if not live or r < cuts[0]:
            s = rng.choice([0, 1, 2]) if multi else 0
            ops.append({"op": "malloc", "size": size, "stream": s, "id": mallocs})
            live[mallocs] = s
            mallocs += 1
        elif r < cuts[1]:
            k = rng.choice(sorted(live))
            ops.append({"op": "free", "id": k})
            del live[k]
        elif streams and r < cuts[2]:
            k = rng.choice(sorted(live))
            others = [s for s in (1, 2) if s != live[k]]
            ops.append({"op": "record", "id": k, "stream": rng.choice(others)})
        elif streams and r < cuts[3]:
            ops.append({"op": "sync", "stream": rng.choice([1, 2])})
        else:
            ops.append({"op": "empty"})
    return ("random-" + family, name, cap, ops)


class FakeCuda:
    """--dry-run: no GPU. Everything succeeds and nothing is cached; the
    recording has the right shape and wrong numbers."""

    def __init__(self):
        self.next = 1 << 40

    def setup(self):
        return {"device": "dry-run", "total": 80 << 30, "torch": "dry-run", "cuda": None}

    def set_cap(self, cap):
        return cap

    def malloc(self, size, stream):
        self.next += max(size, 512)
        return self.next, object()

    def stats(self):
        return {k: 0 for k in KEYS}

    def snapshot(self):
        return []

    def busy(self, s):
        return False

    def arm(self, s):
        pass

    def record(self, t, s):
        pass

    def sync(self, s):
        pass

    def empty(self):
        pass

    def cleanup(self):
        return 0

    def is_oom(self, e):
        return False


class RealCuda:
    def __init__(self, torch, sleep_ms):
        self.torch = torch
        self.sleep_ms = sleep_ms

    def setup(self):
        torch = self.torch
        if not torch.cuda.is_available():
            raise SystemExit("probe: torch sees no CUDA device")
        torch.cuda.init()
        self.streams = [torch.cuda.default_stream(), torch.cuda.Stream(), torch.cuda.Stream()]
        self.handles = {s.cuda_stream: i for i, s in enumerate(self.streams)}
        free, total = torch.cuda.mem_get_info()
        self.total = total
        # Calibrate torch.cuda._sleep: cycles per millisecond.
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        start.record()
        torch.cuda._sleep(20_000_000)
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end)
        self.cycles = int(20_000_000 / ms * self.sleep_ms)
        p = torch.cuda.get_device_properties(0)
        return {"device": p.name, "total": total, "props_total": p.total_memory, "free_at_start": free,
                "torch": torch.__version__, "cuda": torch.version.cuda,
                "sleep_ms": self.sleep_ms, "sleep_cycles": self.cycles, "cycles_per_ms": 20_000_000 / ms}

    def set_cap(self, cap):
        # allowed_memory_maximum = size_t(fraction * double(total)), so aim
        # half a byte over cap and check the product as C++ computes it.
        f = (cap + 0.5) / self.total
        if int(f * float(self.total)) != cap:
            raise SystemExit(f"probe: fraction for cap {cap} gives {int(f * float(self.total))}")
        self.torch.cuda.set_per_process_memory_fraction(f, 0)
        return f

    def malloc(self, size, stream):
        torch = self.torch
        with torch.cuda.stream(self.streams[stream]):
            t = torch.empty(size, dtype=torch.uint8, device="cuda")
        return t.data_ptr(), t

    def stats(self):
        return self.torch.cuda.memory_stats()

    def snapshot(self):
        return self.torch.cuda.memory_snapshot()

    def busy(self, s):
        return not self.streams[s].query()

    def arm(self, s):
        with self.torch.cuda.stream(self.streams[s]):
            self.torch.cuda._sleep(self.cycles)

    def record(self, t, s):
        t.record_stream(self.streams[s])

    def sync(self, s):
        self.streams[s].synchronize()

    def empty(self):
        self.torch.cuda.empty_cache()

    def cleanup(self):
        torch = self.torch
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        st = torch.cuda.memory_stats()
        left = st.get("reserved_bytes.all.current", 0) + st.get("active.all.current", 0)
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.reset_accumulated_memory_stats()
        return left

    def is_oom(self, e):
        return isinstance(e, self.torch.cuda.OutOfMemoryError)


def compact_snapshot(dev, segs):
    """Segments by address: [address, total_size, stream, small, expandable,
    [[size, state, requested_size], ...]]; blocks tile their segment."""
    out, bad = [], []
    for seg in segs:
        if seg.get("device", 0) != 0:
            continue
        addr = seg.get("address", 0)
        blocks, at = [], addr
        for b in seg.get("blocks", []):
            if b.get("address", at) != at:
                bad.append(f"block at {b.get('address')} expected at {at}")
            blocks.append([b.get("size", 0), b.get("state", "?"), b.get("requested_size", -1)])
            at += b.get("size", 0)
        if at != addr + seg.get("total_size", 0):
            bad.append(f"segment {addr} blocks end at {at}")
        stream = getattr(dev, "handles", {}).get(seg.get("stream", 0), -1)
        out.append([addr, seg.get("total_size", 0), stream, 1 if seg.get("segment_type") == "small" else 0,
                    1 if seg.get("is_expandable") else 0, blocks])
    out.sort(key=lambda s: s[0])
    return out, bad


def run_program(dev, prog, out):
    kind, name, cap, ops = prog
    sleeps = any(op["op"] in ("record", "sync") for op in ops)
    rec = {"kind": "program", "family": kind, "name": name, "cap": cap, "sleeps": sleeps, "steps": []}
    start_stats = dev.stats()
    nonzero = {k: v for k, v in start_stats.items() if k in KEYS and v}
    if nonzero:
        rec["start_nonzero"] = nonzero
    rec["fraction"] = dev.set_cap(cap)
    live = {}
    prev_stats, prev_snap = [0] * len(KEYS), []
    if sleeps:
        for s in (1, 2):
            dev.arm(s)
    t0 = time.monotonic()
    for op in ops:
        step = dict(op)
        if sleeps:
            before = [s for s in (1, 2) if not dev.busy(s)]
            if before:
                step["before"] = before
        try:
            if op["op"] in ("free", "record") and op["id"] not in live:
                step["noop"] = True  # its malloc failed
            elif op["op"] == "malloc":
                # No local name may hold the tensor: cleanup must free it.
                step["ptr"], live[op["id"]] = dev.malloc(op["size"], op["stream"])
            elif op["op"] == "free":
                del live[op["id"]]
            elif op["op"] == "record":
                dev.record(live[op["id"]], op["stream"])
            elif op["op"] == "sync":
                dev.sync(op["stream"])
            else:
                dev.empty()
        except Exception as e:  # noqa: BLE001: every failure is recorded
            step["error"] = "oom" if dev.is_oom(e) else type(e).__name__
            step["msg"] = str(e)[:400]
        st = dev.stats()
        snap, bad = compact_snapshot(dev, dev.snapshot())
        if sleeps:
            done = [s for s in (1, 2) if s not in step.get("before", []) and not dev.busy(s)]
            if done:
                step["done"] = done
            for s in (1, 2):
                if not dev.busy(s):
                    dev.arm(s)
        # Only what changed: stats as [index, value] pairs against the
        # step before (all zero before the first), segs left out when the
        # same as the step before's.
        stats = [st.get(k) for k in KEYS]
        step["dstats"] = [[i, v] for i, (v, w) in enumerate(zip(stats, prev_stats)) if v != w]
        prev_stats = stats
        if snap != prev_snap:
            step["segs"] = snap
        prev_snap = snap
        if bad:
            step["tiling"] = bad
        rec["steps"].append(step)
    rec["seconds"] = round(time.monotonic() - t0, 4)
    live.clear()
    left = dev.cleanup()
    if left:
        rec["cleanup_left"] = left
    out.write(json.dumps(rec, separators=(",", ":")) + "\n")
    out.flush()
    return left == 0


def child(args):
    config = args.child
    entry = next(c for c in CONFIGS if c[0] == config)
    _, conf, families, _ = entry
    path = os.path.join(args.out, f"{config}.jsonl")
    with open(path, "a") as out:
        if args.dry_run:
            dev = FakeCuda()
        else:
            import torch
            dev = RealCuda(torch, args.sleep_ms)
        if families is None:  # a configuration PyTorch should refuse
            rec = {"kind": "config", "config": config, "alloc_conf": conf}
            try:
                if args.dry_run:
                    raise RuntimeError("dry-run")
                import torch
                t = torch.empty(1, device="cuda")
                rec["accepted"] = True
                rec["max_split_size"] = torch.cuda.memory_stats().get("max_split_size")
                del t
            except Exception as e:  # noqa: BLE001
                rec["accepted"] = False
                rec["error"] = type(e).__name__
                rec["msg"] = str(e)[:600]
            out.write(json.dumps(rec) + "\n")
            return
        head = {"kind": "header", "config": config, "alloc_conf": conf, "keys": KEYS}
        head.update(dev.setup())
        if not args.dry_run:
            import torch
            t = torch.empty(1, device="cuda")
            head["max_split_size"] = torch.cuda.memory_stats().get("max_split_size")
            head["stats_keys"] = sorted(torch.cuda.memory_stats().keys())
            try:
                head["allocator_backend"] = torch.cuda.get_allocator_backend()
            except Exception as e:  # noqa: BLE001
                head["allocator_backend"] = repr(e)[:200]
            del t
            dev.cleanup()
        out.write(json.dumps(head) + "\n")
        out.flush()
        max_split = int(conf.split(":")[1]) * MiB if conf else 0
        progs = named_programs(config)
        # Round robin over the families, so that a deadline keeps a mix.
        queues = [[random_program(config, fam, i, max_split) for i in range(n)] for fam, n in families.items()]
        for i in range(max(len(q) for q in queues)):
            for q in queues:
                if i < len(q):
                    progs.append(q[i])
        gc.disable()
        done = 0
        for prog in progs:
            if time.time() > args.deadline:
                out.write(json.dumps({"kind": "truncated", "after": done, "of": len(progs)}) + "\n")
                break
            try:
                ok = run_program(dev, prog, out)
            except Exception as e:  # noqa: BLE001
                out.write(json.dumps({"kind": "failed", "name": prog[1], "error": repr(e)[:600]}) + "\n")
                out.flush()
                raise
            done += 1
            if not ok:
                out.write(json.dumps({"kind": "failed", "name": prog[1], "error": "memory left after cleanup"}) + "\n")
                break
        else:
            out.write(json.dumps({"kind": "end", "programs": done}) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for the recordings (CONFIG.jsonl) and log.txt")
    ap.add_argument("--dry-run", action="store_true", help="fake the device: check the probe without a GPU")
    ap.add_argument("--budget", type=float, default=240, help="seconds for all configurations together")
    ap.add_argument("--sleep-ms", type=float, default=80, help="length of the sleep kept queued on streams 1 and 2")
    ap.add_argument("--only", default="", help="comma-separated configurations to run (default: all)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.child:
        child(args)
        return
    end = time.time() + args.budget
    configs = [c for c in CONFIGS if not args.only or c[0] in args.only.split(",")]
    log = open(os.path.join(args.out, "log.txt"), "a")
    for i, (name, conf, _, weight) in enumerate(configs):
        rest = sum(c[3] for c in configs[i:])
        deadline = time.time() + (end - time.time()) * weight / rest
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        env.pop("PYTORCH_ALLOC_CONF", None)
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        cmd = [sys.executable, os.path.abspath(__file__), "--out", args.out, "--child", name,
               "--deadline", str(deadline), "--sleep-ms", str(args.sleep_ms)]
        if args.dry_run:
            cmd.append("--dry-run")
        t0 = time.time()
        print(f"probe: {name} ({conf or 'default'}) until +{deadline - t0:.0f}s", file=log, flush=True)
        try:
            r = subprocess.run(cmd, env=env, stdout=log, stderr=log, timeout=max(10, deadline - t0 + 60))
            print(f"probe: {name} exit {r.returncode} in {time.time() - t0:.1f}s", file=log, flush=True)
        except subprocess.TimeoutExpired:
            print(f"probe: {name} timed out after {time.time() - t0:.1f}s", file=log, flush=True)
    log.close()


if __name__ == "__main__":
    main()
