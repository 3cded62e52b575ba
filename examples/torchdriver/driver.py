#!/usr/bin/env python3
"""A tlcheck-drive driver for real PyTorch: layer-5 (autograd) programs.

tlcheck sends autograd programs (drive/PROTOCOL.md, "Layer 5: autograd
programs"); this driver runs each call in real PyTorch and answers with what
PyTorch did: the outcome and PyTorch's own message, the tensor made or
written, the gradients, and the memory side as trace events of layers 2 and
5 (traces/FORMAT.md), which tlcheck holds to its model.

Two PyTorch worlds run every program in lockstep:

  A, the truth: plain PyTorch. Its outcomes, messages, values, gradients
     and version counters are the answer's.
  B, the observer: the same calls under torch.autograd.graph.
     saved_tensors_hooks. The pack hook sees every tensor a node saves and
     returns an object holding what PyTorch's saved variable would hold
     without hooks; that object dies when PyTorch drops the saved variable;
     the unpack hook sees backward read it. With hooks PyTorch does not
     check saved versions (saved_variable.cpp: "Only check version counter
     in the case without hooks"), so the unpack hook makes PyTorch's checks
     itself and raises where A's PyTorch refuses.

A call A refuses must be refused by B at the same call, and the other way
round; where they differ the driver says so on stderr and answers refused
with a message starting "torchdriver: the two PyTorch worlds diverged" (a
driver bug, never a verdict on PyTorch).

The objects of the trace are version counters: the storage of a tensor as
its views and detach() see it (they share PyTorch's counter), while .data
gets a counter, and so an object, of its own. Each gets a synthetic address
when it first appears and is freed when nothing holds it any more: no
Python tensor of it alive (weak references; PyTorch keeps a tensor alive
while its graph refers to it) and no saved tensor of it held.

Usage: driver.py [--fault NAME]   (faults, for proving tlcheck's checks:
no-view-bump, no-leaf-grad, no-unsave)
"""

import gc
import json
import math
import os
import shutil
import subprocess
import sys
import warnings
import weakref


def _find_torch():
    """Runs this driver again under an interpreter that imports torch, when
    the one it was started with does not: the first python3 on the PATH
    need not be the one Debian's python3-torch installed for. Tried, as
    internal/python.Find does: $TLCHECK_PYTHON, python3, python3.13 ... python3.9,
    python, /usr/bin/python3, /usr/local/bin/python3."""
    if os.environ.get("TLCHECK_TORCHDRIVER_REEXEC"):
        return
    names = [os.environ.get("TLCHECK_PYTHON", ""), "python3", "python3.13", "python3.12", "python3.11",
             "python3.10", "python3.9", "python", "/usr/bin/python3", "/usr/local/bin/python3"]
    here = os.path.realpath(sys.executable)
    for name in names:
        path = shutil.which(name) if name else None
        if not path or os.path.realpath(path) == here:
            continue
        probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"  # no import: fast
        if subprocess.run([path, "-c", probe], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            os.environ["TLCHECK_TORCHDRIVER_REEXEC"] = "1"
            sys.stderr.write("torchdriver: %s has no torch; running under %s\n" % (sys.executable, path))
            sys.stderr.flush()
            os.execv(path, [path, os.path.abspath(__file__)] + sys.argv[1:])


try:
    import torch
except ImportError:
    _find_torch()
    sys.stderr.write("torchdriver: no Python here imports torch (install python3-torch, or set TLCHECK_PYTHON)\n")
    sys.exit(2)

F64 = torch.float64
VERSION = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2] if p.isdigit())

# Where this PyTorch differs from the current release, the driver answers as
# the current release would and says so here (hello "notes", and stderr once).
# A difference it cannot answer away is also declared as data (hello
# "departures", drive/PROTOCOL.md "Declared departures"), which the
# differential honours: a disagreement one explains is set aside, counted.
NOTES = []
DEPARTURES = []
RENAMES = {}
if VERSION < (2, 0):
    RENAMES["ReshapeAliasBackward0"] = "ViewBackward0"
    NOTES.append(
        "PyTorch %s names reshape's node ReshapeAliasBackward0; the current release names it "
        "ViewBackward0: this driver answers ViewBackward0, in grad_fn and in messages" % torch.__version__)
# The hint that ends the saved-tensor-modified message: 1.13's, and the
# current release's (2.11, reports/torch-current.md).
RENAMES["set_detect_anomaly(True)."] = "set_detect_anomaly(True, check_nan=False)."
NOTES.append(
    "the saved-tensor-modified message ends with the current release's hint, "
    "`torch.autograd.set_detect_anomaly(True, check_nan=False).`; older releases (1.13 among them) "
    "say `set_detect_anomaly(True).`: this driver answers the current words")
NOTES.append(
    "zero_grad is answered as `t.grad = None`, what the current release's zero_grad does by default "
    "(before 2.0 it zeroed the gradient in place)")
NOTES.append(
    "after a backward that raised, PyTorch's engine keeps the nodes it had queued (with what they saved, "
    "and the leaves they reach) until the next backward on the thread: at end, before the leak check, "
    "the driver runs one backward of its own (of a one-element tensor) so that they go")
if VERSION < (2, 0):
    NOTES.append(
        "PyTorch %s crashes (a segmentation fault) in retain_grad() of a view whose base was written in place "
        "after the view was made: the driver reads the view's grad_fn first, which makes it anew, as any use "
        "of the view would; nothing it reports changes" % torch.__version__)
    NOTES.append(
        "PyTorch %s keeps a retained gradient on the node it was retained at: after an in-place op "
        "through a view of a tensor that retains grad, that tensor's .grad is what its old node receives "
        "(t = w * 1; t.retain_grad(); t[0:1].mul_(3); t.sum().backward() gives t.grad [3, 1]), where the "
        "current release moves it to the new node ([1, 1]); this driver cannot move PyTorch's hook and "
        "answers %s's gradient" % (torch.__version__, torch.__version__))
    NOTES.append(
        "PyTorch %s fails an internal assert (\"!grad_fn INTERNAL ASSERT FAILED\") at an in-place op on a view "
        "of a view made under no_grad, or when asked such a view's grad_fn after, a bug of %s's: this driver "
        "answers its words" % (torch.__version__, torch.__version__))
    DEPARTURES.append({
        "name": "no-grad-view-internal-assert", "message": "!grad_fn INTERNAL ASSERT FAILED",
        "note": "PyTorch %s fails an internal assert on a view of a view made under no_grad" % torch.__version__})
    DEPARTURES.append({
        "name": "retain-grad-old-node", "op": "backward", "field": "grads", "after": ["retain_grad"],
        "note": "PyTorch %s keeps a retained gradient on the node it was retained at" % torch.__version__})
    NOTES.append(
        "PyTorch %s's DivBackward0 unpacks the dividend before the divisor, the current release the divisor "
        "first: with both modified in place, this driver names the dividend in the saved-tensor-modified message "
        "where the current release names the divisor; it cannot answer the current release's" % torch.__version__)
    NOTES.append(
        "PyTorch %s's MulBackward0 unpacks self before the other operand, the current release the other "
        "first: with both modified in place, this driver names self in the saved-tensor-modified message "
        "where the current release names the other; it cannot answer the current release's" % torch.__version__)
    DEPARTURES.append({
        "name": "mul-backward-unpack-order", "op": "backward", "field": "message", "after": ["mul"],
        "message": "modified by an inplace operation", "other": "modified by an inplace operation",
        "note": "PyTorch %s's MulBackward0 names self where the current release names the other operand" % torch.__version__})
    DEPARTURES.append({
        "name": "div-backward-unpack-order", "op": "backward", "field": "message", "after": ["div"],
        "message": "modified by an inplace operation", "other": "modified by an inplace operation",
        "note": "PyTorch %s's DivBackward0 names the dividend where the current release names the divisor" % torch.__version__})
    NOTES.append(
        "node names other than reshape's are PyTorch %s's own: its matmul of a vector by a matrix "
        "ends with SqueezeBackward3 (squeeze_), which later releases, with more overloads of squeeze, "
        "may number otherwise" % torch.__version__)

LEAF_MESSAGES = (
    "a leaf Variable that requires grad is being used in an in-place operation.",
    "a view of a leaf Variable that requires grad is being used in an in-place operation.",
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled.",
)
STALE_MESSAGE = "A view was created in no_grad mode and its base or another view of its base has been modified inplace"
MODIFIED_MESSAGE = "one of the variables needed for gradient computation has been modified by an inplace operation"
TWICE_MESSAGE = "Trying to backward through the graph a second time"
DIVERGED = "torchdriver: the two PyTorch worlds diverged"

FAULTS = ("no-view-bump", "no-leaf-grad", "no-unsave")

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "matmul": lambda a, b: a.matmul(b),
}
UNARY = {
    "neg": lambda a: -a,
    "exp": lambda a: a.exp(),
    "log": lambda a: a.log(),
    "tanh": lambda a: a.tanh(),
    "relu": lambda a: a.relu(),
    "sum": lambda a: a.sum(),
    "detach": lambda a: a.detach(),
    "data": lambda a: a.data,
}
INPLACE = {
    "add_": lambda t, b: t.add_(b),
    "sub_": lambda t, b: t.sub_(b),
    "mul_": lambda t, b: t.mul_(b),
    "div_": lambda t, b: t.div_(b),
}
ALIASES = ("slice", "reshape", "detach")  # results that share their operand's version counter
SAVE_OUTPUT = ("exp", "tanh", "relu")  # the ops whose node saves their result


class Refusal(Exception):
    """A call the driver cannot make (an unknown handle): refused, no events."""


class SavedModified(Exception):
    """Raised by world B's unpack hook where A's PyTorch checks the version;
    stale is the error A's PyTorch raises first at that read, if any (see
    Observer.unpack)."""

    def __init__(self, name, stale=None):
        super().__init__(name)
        self.stale = stale


class StaleView(RuntimeError):
    """Raised by world B's unpack hook where A's PyTorch, reading a saved
    view's grad_fn, raises (a view made under no_grad whose base was then
    written in place); its message is PyTorch's."""


def storage_of(t):
    """The tensor's storage: its address (identity while alive) and size."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    nbytes = s.nbytes() if callable(getattr(s, "nbytes", None)) else s.size() * s.element_size()
    return s.data_ptr(), nbytes


def rename(s):
    for old, new in RENAMES.items():
        s = s.replace(old, new)
    return s


def grad_fn_name(t):
    return None if t.grad_fn is None else rename(type(t.grad_fn).__name__)


def flat(t):
    return t.detach().reshape(-1).tolist()


def build(values, shape):
    """Nested lists of values in shape, for torch.tensor."""
    if not shape:
        return values[0]
    step = len(values) // shape[0] if shape[0] else 0
    return [build(values[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def number(v):
    """A protocol number as a float: "nan", "inf" and "-inf" are strings."""
    return float(v)  # float("nan"), float("inf"), float("-inf") read them


def num(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


class Family:
    """A version counter: the object of the trace for a storage as its
    views and aliases see it."""

    __slots__ = ("addr", "holders", "members", "dead", "key")

    def __init__(self, addr, key):
        self.addr, self.key = addr, key
        self.holders = 0  # the model's count: 1 for live Python tensors, 1 per saved tensor
        self.members = 0  # live Python tensors tracked on it
        self.dead = False


class Packed:
    """What world B's pack hook returns for a saved tensor: its name, an
    alias sharing its storage and version counter (what unpack returns),
    its version then, and what PyTorch would keep of it (original)."""

    __slots__ = ("name", "t", "version", "family", "original", "__weakref__")

    def __init__(self, name, t, family, output):
        self.name, self.t, self.version, self.family = name, t.detach(), t._version, family
        # What PyTorch's SavedVariable keeps without hooks: the tensor itself
        # when it is not the output of the node saving it (its grad_fn is
        # another node's), which keeps that tensor's graph alive, and only
        # its data for an output (whose grad_fn is the node saving it: a
        # cycle). B holds the same, so that what lives in A lives in B.
        self.original = None if output else t


class Observer:
    """World B's bookkeeping: families, saved tensors, and the events of
    the call being made."""

    def __init__(self, faults):
        self.faults = faults
        self.events = []
        self.closed = False
        self.next_addr = 0x10000
        self.next_name = 0
        self.tracked = {}  # id(tensor) -> (weakref, Family)
        self.by_storage = {}  # storage address -> [Family] alive
        self.unsaved = set()
        self.packed = []  # (call, name) packed during the current call
        self.modified = None  # the name whose unpack found it modified
        self.stale = None  # and the error PyTorch raises first there, if any
        self.attempt = None  # the event of the access refused, if any
        self.call = 0
        self.op = None  # the call being made

    def emit(self, op, **fields):
        if not self.closed:
            ev = {"op": op}
            ev.update(fields)
            self.events.append(ev)

    def new_family(self, t, leaf_grad=False):
        """A new object for t's storage, with one count: the caller's."""
        key, nbytes = storage_of(t)
        fam = Family(self.next_addr, key)
        # Sizes are the storage's; an empty storage still gets one byte, as
        # a size-0 object would be the zero-sized type (NULL) to the model.
        size = max(nbytes, 1)
        self.next_addr += (size + 0xFF) & ~0xFF
        self.by_storage.setdefault(key, []).append(fam)
        addr = "0x%x" % fam.addr
        self.emit("alloc", addr=addr, size=size)
        self.emit("unregister", addr=addr)  # held by its tensors and saves, not by a scope
        if leaf_grad and "no-leaf-grad" not in self.faults:
            self.emit("leaf_grad", addr=addr)
        fam.holders = 1
        return fam

    def hold(self, fam):
        self.emit("acquire", addr="0x%x" % fam.addr)
        fam.holders += 1

    def let_go(self, fam):
        addr = "0x%x" % fam.addr
        self.emit("release", addr=addr)
        fam.holders -= 1
        if fam.holders == 0:
            self.emit("free", addr=addr)
            fam.dead = True
            fams = self.by_storage.get(fam.key, [])
            if fam in fams:
                fams.remove(fam)
            if not fams:
                self.by_storage.pop(fam.key, None)

    def family(self, t):
        """The family of a tensor tracked, or of its base; None if neither."""
        for x in (t, t._base):
            if x is None:
                continue
            e = self.tracked.get(id(x))
            if e is not None and e[0]() is x:
                return e[1]
        return None

    def tracks(self, t):
        e = self.tracked.get(id(t))
        return e is not None and e[0]() is t

    def track(self, t, fam, counted=False):
        """t is a live Python tensor of fam, which is held while any is:
        the first takes a count (counted: new_family's, taken for it)."""
        if self.tracks(t):
            return
        self.tracked[id(t)] = (weakref.ref(t), fam)
        if fam.members == 0 and not counted:
            self.hold(fam)
        fam.members += 1
        weakref.finalize(t, self._untracked, id(t), fam)

    def _untracked(self, key, fam):
        if self.closed:
            return
        e = self.tracked.get(key)
        if e is not None and e[1] is fam and e[0]() is None:
            del self.tracked[key]
        fam.members -= 1
        if fam.members == 0:
            self.let_go(fam)

    def adopt(self, t, leaf_grad=False):
        """t, a tensor the program holds now, in a new family."""
        self.track(t, self.new_family(t, leaf_grad), counted=True)

    # The hooks of world B.

    def pack(self, t):
        fam = self.family(t)
        known = fam is not None  # a tensor of the program's, an input: not the output being made
        if fam is None:
            # Not a tensor of the program's nor a view of one: the output of
            # the op being made, or a temporary of PyTorch's (a clone, a
            # wrapped number), or, rarely, an alias of a storage we know.
            fams = self.by_storage.get(storage_of(t)[0])
            fam = fams[-1] if fams else None
        name = "s%d" % self.next_name
        self.next_name += 1
        if fam is None:
            fam = self.new_family(t)  # its count is the save's
            self.emit("save", name=name, addr="0x%x" % fam.addr)
            self.track(t, fam)  # and the tensor's, while it lives
        else:
            self.emit("save", name=name, addr="0x%x" % fam.addr)
            self.hold(fam)
        p = Packed(name, t, fam, output=not known and self.op in SAVE_OUTPUT)
        weakref.finalize(p, self._unsaved, name, fam)
        self.packed.append((self.call, name))
        return p

    def _unsaved(self, name, fam):
        if self.closed:
            return
        self.unsaved.add(name)
        if "no-unsave" not in self.faults:
            self.emit("unsave", name=name)
        self.let_go(fam)

    def unpack(self, p):
        """PyTorch's checks of SavedVariable::unpack, in its order: without
        hooks it reads a saved input's grad_fn first (which raises for a
        view made under no_grad whose base was since written in place),
        then the version."""
        self.emit("unpack", name=p.name)
        stale = None
        if p.original is not None and p.original._is_view():
            try:
                p.original.grad_fn
            except RuntimeError as e:
                stale = str(forget(e))
        if p.t._version != p.version:
            self.modified, self.stale = p.name, stale
            self.attempt = self.events[-1] if self.events else None
            raise SavedModified(p.name, stale)
        if stale is not None:
            raise StaleView(stale)
        return p.t

    def close(self):
        self.closed = True


class World:
    """One PyTorch world: the program's tensors by handle."""

    def __init__(self, observer=None):
        self.tensors = {}
        self.obs = observer

    def get(self, h):
        t = self.tensors.get(h)
        if t is None:
            raise Refusal("torchdriver: no tensor under handle %d (never made, or dropped)" % h)
        return t

    def make(self, c):
        """Makes the call's tensor; returns it."""
        op = c["op"]
        if op == "leaf":
            t = torch.tensor(build([number(v) for v in c["values"]], c["shape"]), dtype=F64)
            return t.requires_grad_(bool(c["requires_grad"]))
        a = self.get(c["a"])
        if op in BINARY:
            return BINARY[op](a, self.get(c["b"]))
        if op in UNARY:
            return UNARY[op](a)
        if op == "pow":
            return a ** number(c["exponent"])
        if op == "reshape":
            return a.reshape(c["shape"])
        if op == "slice":
            return a[c["start"]:c["stop"]]
        raise Refusal("torchdriver: no call %r" % op)

    def write(self, c):
        """Makes an in-place call on its target; returns the target."""
        t = self.get(c["target"])
        if c["op"] == "zero_":
            return t.zero_()
        other = number(c["scalar"]) if "scalar" in c else self.get(c["b"])
        return INPLACE[c["op"]](t, other)


def leaf_checked(t):
    """Whether PyTorch's leaf check refuses an in-place write of t now:
    grad mode on, t requires grad, and t is a leaf or a view of one that
    requires grad (a view made under no_grad included). A detached alias
    does not require grad, and a view of a non-leaf is not a leaf's."""
    if not torch.is_grad_enabled() or not t.requires_grad:
        return False
    if t._is_view():  # t.is_leaf would make a stale view's grad_fn anew, or raise
        b = t._base
        return b is not None and b.is_leaf and b.requires_grad
    return t.is_leaf


class Driver:
    def __init__(self, faults):
        self.faults = faults
        self.a = self.b = self.obs = None
        self.reset()

    def reset(self):
        if self.obs is not None:
            self.obs.close()
        self.a, self.b = World(), None
        drain()
        gc.collect()  # the last program's cycles, if any, die before the next one runs
        self.obs = Observer(self.faults)
        self.b = World(self.obs)
        self.first = True

    def serve(self, c):
        """Makes call c in both worlds; returns the answer's fields."""
        obs = self.obs
        obs.events, obs.packed, obs.modified, obs.stale, obs.attempt = [], [], None, None, None
        obs.call += 1
        obs.op = c["op"]
        if self.first:
            obs.emit("scope_enter")
            self.first = False
        op = c["op"]
        ans = {}
        ctx = torch.no_grad() if c.get("no_grad") else _Null()
        with ctx:
            ra, ea = self.run_a(c)
            rb, eb, before = self.run_b(c)
        refused = ea is not None
        kinds = []
        msg = None
        if (ea is None) != (eb is None) or (eb is not None and not self.same_refusal(ea, eb)):
            msg = "%s at this call: PyTorch without hooks %s, PyTorch observed through hooks %s" % (
                DIVERGED, describe(ea), describe(eb))
        elif ea is None and not self.same_values(op, ra, rb):
            msg = "%s at this call: PyTorch observed through hooks computed other values" % DIVERGED
        if msg is not None:
            print(msg, file=sys.stderr, flush=True)
            ans.update(outcome="refused", message=msg)
            return self.finish(ans, obs)
        if refused:
            msg = rename(str(ea).split("\n")[0] if isinstance(ea, Refusal) else str(ea))
            ans.update(outcome="refused", message=msg)
            kinds = self.kinds(c, ea, before)
            if kinds:
                ans["kinds"] = kinds
                # The refused access is the answer's last event (PROTOCOL.md):
                # what PyTorch let go of while unwinding came after it.
                ev = obs.attempt
                if ev is None or not any(e is ev for e in obs.events):
                    print("torchdriver: a refusal of kind %s with no access to show" % kinds, file=sys.stderr)
                else:
                    obs.events = [e for e in obs.events if e is not ev] + [ev]
        else:
            ans["outcome"] = "done"
            if ra is not None and op not in ("backward", "zero_grad", "retain_grad", "drop", "end"):
                ans["tensor"] = tensor_state(ra)
                # Reading grad_fn makes a stale view's anew, and PyTorch's
                # next in-place check depends on it: B reads what A read.
                tensor_state(rb)
        if op == "backward":
            ans["grads"] = self.grads()
        return self.finish(ans, obs)

    def finish(self, ans, obs):
        ans["events"] = obs.events if not obs.closed else []
        return ans

    def same_refusal(self, ea, eb):
        if isinstance(eb, SavedModified):
            return (str(ea) == eb.stale) if eb.stale is not None else MODIFIED_MESSAGE in str(ea)
        if isinstance(eb, StaleView):
            return str(ea) == str(eb)
        return type(ea) is type(eb) and str(ea) == str(eb)

    def kinds(self, c, err, before):
        msg = str(err)
        obs = self.obs
        if MODIFIED_MESSAGE in msg or msg.startswith(STALE_MESSAGE) and obs.modified is not None:
            # The second: PyTorch found the saved view stale before its version,
            # and says so; the tensor was modified since it was saved all the same.
            return ["saved-modified"]
        if msg.startswith(TWICE_MESSAGE):
            # B's PyTorch found the saved variable released before it called
            # any hook: name the newest saved tensor of the graph already let go.
            name = self.released_in_graph(c, before)
            if name is None:
                print("torchdriver: backward twice, and no saved tensor of the graph was let go", file=sys.stderr)
                return []
            obs.emit("unpack", name=name)
            obs.attempt = obs.events[-1]
            return ["use-after-free"]
        if any(m in msg for m in LEAF_MESSAGES) and before is not None and before.get("leaf_checked"):
            fam = before["family"]
            if fam is not None:
                obs.emit("bump", addr="0x%x" % fam.addr)  # the write asked for, refused
                obs.attempt = obs.events[-1]
            return ["misuse"]
        return []

    def released_in_graph(self, c, before):
        t = self.b.tensors.get(c["target"])
        try:
            root = None if t is None else t.grad_fn
        except RuntimeError as e:  # a stale view's: PyTorch says no
            forget(e)
            root = None
        if root is None:
            return None
        unsaved = before["unsaved"]
        best, seen, stack, keep = None, set(), [root], []
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            keep.append(node)  # ids stay unique while the nodes are held
            for call, name in getattr(node, "metadata", {}).get("tlcheck", ()):
                if name in unsaved and (best is None or (call, name) > best):
                    best = (call, name)
            stack.extend(n for n, _ in node.next_functions)
        return None if best is None else best[1]

    def run_a(self, c):
        op = c["op"]
        if op in INPLACE or op == "zero_":
            t = self.a.tensors.get(c["target"])
            if t is not None:
                leaf_checked(t)  # B reads this before the write: so does A, the same reads in both
        try:
            return self.step(self.a, c), None
        except (RuntimeError, IndexError, ValueError, TypeError, Refusal) as e:
            return None, forget(e)

    def run_b(self, c):
        obs = self.obs
        before = {"unsaved": set(obs.unsaved)}
        op = c["op"]
        if op in INPLACE or op == "zero_":
            t = self.b.tensors.get(c["target"])
            if t is not None:
                before.update(leaf_checked=leaf_checked(t), family=obs.family(t), version=t._version,
                              view=t._is_view(), grad=torch.is_grad_enabled(), requires_grad=t.requires_grad)
        try:
            with torch.autograd.graph.saved_tensors_hooks(obs.pack, obs.unpack):
                r = self.step(self.b, c)
                self.observe(c, r, before)
            return r, None, before
        except SavedModified as e:
            return None, forget(e), before
        except (RuntimeError, IndexError, ValueError, TypeError, Refusal) as e:
            forget(e)
            if obs.modified is not None:  # raised through PyTorch's engine, maybe wrapped
                return None, SavedModified(obs.modified, obs.stale), before
            return None, e, before

    def step(self, w, c):
        op = c["op"]
        if op in ("leaf", "pow", "reshape", "slice") or op in BINARY or op in UNARY:
            r = w.make(c)
            w.tensors[c["handle"]] = r
            return r
        if op in INPLACE or op == "zero_":
            return w.write(c)
        if op == "backward":
            w.get(c["target"]).backward(retain_graph=bool(c.get("retain_graph")))
            return None
        if op == "zero_grad":
            w.get(c["target"]).grad = None
            return None
        if op == "retain_grad":
            t = w.get(c["target"])
            if VERSION < (2, 0):
                # 1.13 crashes on a view whose grad_fn an in-place op made
                # stale; reading it makes it anew. A view made under no_grad
                # refuses the read, and retain_grad leaves it be (a leaf to
                # it): the refusal is the read's, not PyTorch's answer.
                try:
                    t.grad_fn
                except RuntimeError as e:
                    forget(e)
            t.retain_grad()
            return None
        if op == "drop":
            w.get(c["target"])
            del w.tensors[c["target"]]
            return None
        if op == "end":
            w.tensors.clear()
            drain()
            if w.obs is not None:
                gc.collect()
            return None
        raise Refusal("torchdriver: no call %r" % op)

    def observe(self, c, r, before):
        """World B after a call it made: the families of what it made, the
        bumps of what it wrote, the saves of the node it made."""
        obs = self.obs
        op = c["op"]
        if op == "leaf":
            obs.adopt(r, leaf_grad=r.requires_grad)
        elif op == "data":
            obs.adopt(r)  # .data has a version counter of its own
        elif op in ALIASES and (op != "reshape" or r._is_view()):
            obs.track(r, obs.family(self.b.get(c["a"])))
        elif op in BINARY or op in UNARY or op == "pow" or op == "reshape":
            if not obs.tracks(r):  # else an output its node saved: known since the pack hook
                obs.adopt(r)
        elif op in INPLACE or op == "zero_":
            n = r._version - before["version"]
            fam = before["family"]
            if "no-view-bump" in self.faults and before["view"]:
                n = 0
            for _ in range(n):
                if before["leaf_checked"]:
                    obs.emit("bump", addr="0x%x" % fam.addr)
                else:
                    obs.emit("bump", addr="0x%x" % fam.addr, kind="no_grad")
        elif op == "end":
            obs.emit("scope_exit")
            obs.emit("end")
        if obs.packed and r is not None and r.grad_fn is not None:  # a node just made: its grad_fn is fresh
            r.grad_fn.metadata.setdefault("tlcheck", []).extend(obs.packed)

    def grads(self, w=None):
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for h, t in sorted((w or self.a).tensors.items()):
                g = t.grad
                if g is not None:
                    out.append({"handle": h, "values": [num(x) for x in flat(g)]})
        return out

    def same_values(self, op, ra, rb):
        """Whether B computed what A did: the tensor made or written, or
        after a backward every gradient (B's saved tensors are its own
        objects: a driver that unpacked the wrong one would show here)."""
        if op == "backward":
            return self.grads(self.a) == self.grads(self.b)
        if ra is None or rb is None:
            return ra is rb
        return [num(x) for x in flat(ra)] == [num(x) for x in flat(rb)]


def drain():
    """Runs a backward of the driver's own, with no saved tensor, so that
    PyTorch's engine lets go of the nodes a backward that raised left in
    its ready queue."""
    with torch.enable_grad():
        torch.ones(1, dtype=F64, requires_grad=True).sum().backward()


def forget(e):
    """Drops what an exception refers to: its traceback's frames hold
    tensors, and with gc off they would live to the next collection."""
    if e is not None:
        e.__traceback__ = e.__context__ = e.__cause__ = None
    return e


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def describe(e):
    return "accepted the call" if e is None else "refused it (%s: %s)" % (type(e).__name__, str(e).split("\n")[0])


def tensor_state(t):
    try:
        grad_fn, is_leaf = grad_fn_name(t), t.is_leaf
    except RuntimeError as e:
        # PyTorch refuses to say (a view made under no_grad whose base was
        # then written in place): say what it says.
        grad_fn, is_leaf = "<error: %s>" % rename(str(forget(e))), False
    return {
        "shape": list(t.shape),
        "values": [num(x) for x in flat(t)],
        "requires_grad": t.requires_grad,
        "is_leaf": is_leaf,
        "grad_fn": grad_fn,
        "version": t._version,
    }


def main(argv):
    faults = set()
    args = argv[1:]
    while args:
        a = args.pop(0)
        if a == "--fault" and args:
            f = args.pop(0)
            if f not in FAULTS:
                print("torchdriver: no fault %r (the faults are %s)" % (f, ", ".join(FAULTS)), file=sys.stderr)
                return 2
            faults.add(f)
        else:
            print(__doc__.strip().splitlines()[-3], file=sys.stderr)
            return 2
    gc.disable()  # collections only where the driver asks: the same program, the same trace
    gc.collect()
    gc.freeze()  # torch's own objects: the collections at each end need not walk them
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    for n in NOTES:
        print("torchdriver: note: " + n, file=sys.stderr)
    sys.stderr.flush()
    out = sys.stdout
    src = "PyTorch %s (CPU), two worlds, over tlcheck-drive" % torch.__version__
    if faults:
        src += ", fault " + ", ".join(sorted(faults))
    out.write(json.dumps({"protocol": "tlcheck-drive", "version": 1, "layers": [5], "source": src, "notes": NOTES,
                          "departures": DEPARTURES},
                         separators=(",", ":")) + "\n")
    out.flush()
    d = Driver(faults)
    stdin = sys.stdin.buffer
    for line in stdin:
        c = json.loads(line)
        cid = c.get("id")
        if c.get("op") == "reset":
            d.reset()
            ans = {"events": [], "outcome": "done"}
        else:
            ans = d.serve(c)
        line = {"id": cid, "events": ans.pop("events")}
        line.update(ans)
        out.write(json.dumps(line, separators=(",", ":")) + "\n")
        out.flush()  # before waiting for the next line: tlcheck waits for this answer
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
