"""Python's own pickle, as an oracle for the reader's differential tests.

Reads pickles from stdin, each as a 4-byte little-endian length and the
bytes, and writes one line for each: "ok CANON", "err TYPE", or "skip WHY"
for an input the oracle will not load (one whose memo indexes would make
Python allocate gigabytes). CANON is the canonical form that
traces/torchsnap's tests also write (canon_test.go): None N, bools T/F,
ints i and hex, floats f and the hex of their bits, str s and the hex of
its UTF-8 (surrogatepass), bytes b and hex, lists [...], tuples (...),
dicts {k:v,...} with keys sorted and numbers equal as Python holds them.
No code is imported or called: find_class and persistent_load refuse.
"""
import io
import math
import pickle
import pickletools
import struct
import sys

LIMIT = 1 << 20


class Refuse(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persid")


class TooLong(Exception):
    pass


def key(v, size):
    """A dict key's canonical form: numbers by value (1 == 1.0 == True)."""
    size[0] += 1
    if size[0] > LIMIT:
        raise TooLong()
    if isinstance(v, bool):
        return "i" + format(int(v), "x")
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return "i" + format(int(v), "x")
    if isinstance(v, tuple):
        return "(" + ",".join(key(x, size) for x in v) + ")"
    return canon(v, set(), size)


def canon(v, busy, size):
    size[0] += 1
    if size[0] > LIMIT:
        raise TooLong()
    if v is None:
        return "N"
    if v is True:
        return "T"
    if v is False:
        return "F"
    if isinstance(v, int):
        return "i" + format(v, "x")
    if isinstance(v, float):
        return "fnan" if math.isnan(v) else "f" + struct.pack(">d", v).hex()
    if isinstance(v, str):
        s = v.encode("utf-8", "surrogatepass").hex()
        size[0] += len(s)
        return "s" + s
    if isinstance(v, bytes):
        size[0] += len(v)
        return "b" + v.hex()
    if id(v) in busy:
        return "<cycle>"
    busy.add(id(v))
    try:
        if isinstance(v, list):
            return "[" + ",".join(canon(x, busy, size) for x in v) + "]"
        if isinstance(v, tuple):
            return "(" + ",".join(canon(x, busy, size) for x in v) + ")"
        if isinstance(v, dict):
            items = sorted(key(k, size) + ":" + canon(x, busy, size) for k, x in v.items())
            return "{" + ",".join(items) + "}"
    finally:
        busy.discard(id(v))
    return "X" + type(v).__name__


def one(data):
    try:
        for op, arg, pos in pickletools.genops(data):
            if op.name in ("PUT", "BINPUT", "LONG_BINPUT") and int(arg) > 1 << 20:
                return "skip memo index"
    except Exception:
        pass
    try:
        f = io.BytesIO(data)
        v = Refuse(f).load()
        rest = len(data) - f.tell()
    except RecursionError:
        return "skip recursion"
    except Exception as e:
        return "err " + type(e).__name__
    try:
        c = canon(v, set(), [0])
    except (TooLong, RecursionError):
        return "skip too long"
    if rest:
        return "ok-trailing " + c
    return "ok " + c


def main():
    inp, out = sys.stdin.buffer, sys.stdout
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return
        n = int.from_bytes(head, "little")
        out.write(one(inp.read(n)) + "\n")
        out.flush()


main()
