'use strict';
// The Observer wraps tfjs's engine, its tensors and the CPU backend at run
// time and records what they do as trace events (traces/FORMAT.md, layers 1
// and 2), as drive/PROTOCOL.md's "tfjs programs" section maps them:
//
//   backend.write (a new data buffer)      alloc B (size: its bytes), unregister B
//   backend.incRef                         acquire B
//   backend.disposeData, count kept        release B
//   backend.disposeData, buffer deleted    release B, free B
//   engine.trackTensor (a tensor)          struct_init T [B]; unregister T if no tidy is open
//   engine.trackTensor (a variable)        param_register "v<name>" B
//   Variable.assign(x)                     param_register "v<name>" B(x), before the old buffer goes
//   engine.disposeVariable                 param_release "v<name>" (a variable still registered)
//   engine.disposeTensor (a tensor)        release T (unless a tidy's end disposes it), then
//                                          free T when the engine untracks it, then the backend's
//   engine.startScope                      scope_enter
//   engine.endScope(result)                unregister R (each result tensor made in the scope),
//                                          scope_exit, the frees, the backend's, register R
//                                          (each result the engine tracks in the parent)
//   engine.keep(T)                         unregister T (a tensor recorded in an open scope)
//   engine.runKernel inputs                read T (each tensor a kernel takes)
//   backend.data.get in a kernel, readSync read B (each buffer read)
//   Tensor.throwIfDisposed                 read T (the check before dataSync, arraySync, ...)
//
// Addresses: buffer n (in the order first seen) at n<<24, tensor n at
// 1<<52 + 16n (8 bytes each); variables by name. Only tensors the engine
// tracked while the driver watched have addresses: what a reset disposes
// is not recorded.

const TENSOR_BASE = 2 ** 52;
const ADDR = Symbol('tlcheck address');

class Observer {
  constructor(tf) {
    this.tf = tf;
    this.engine = tf.engine();
    this.backend = tf.backend();
    this.events = null; // the events of the call being made; null: not recording
    this.group = 0; // > 0: inside a disposal, whose tensor frees go first
    this.frees = [];
    this.rest = [];
    this.nBuf = 0;
    this.nTensor = 0;
    this.inEndScope = 0;
    this.assigning = null; // the new value of the Variable.assign being made
    this.kernel = null; // the kernel running, and the buffers it read
    this.kernelReads = null;
    this.quiet = 0; // > 0: backend calls of the backend's own bookkeeping
    this.wrap();
  }

  // start begins recording a call's events; stop returns them.
  start() { this.events = []; }
  stop() { const e = this.events; this.events = null; return e; }

  // emit records ev, as its JSON text: every value in an event is an op
  // name, a hex address, a number or a variable's name "v<digits>", none
  // of which JSON escapes.
  emit(ev) {
    if (this.events === null) return;
    let j = '{"op":"' + ev.op + '"';
    if (ev.name !== undefined) j += ',"name":"' + ev.name + '"';
    if (ev.addr !== undefined) j += ',"addr":"' + ev.addr + '"';
    if (ev.size !== undefined) j += ',"size":' + ev.size;
    if (ev.kind !== undefined) j += ',"kind":"' + ev.kind + '"';
    if (ev.fields !== undefined) j += ',"fields":["' + ev.fields.join('","') + '"]';
    j += '}';
    if (this.group > 0) {
      (ev.op === 'free' && ev.tensor ? this.frees : this.rest).push(j);
    } else {
      this.events.push(j);
    }
  }

  // grouped runs f as one disposal: the frees of the tensors it untracks
  // are recorded before the backend's releases and frees, so that each
  // tensor is freed before the reference it held on its buffer is dropped.
  grouped(f) {
    this.group++;
    try {
      return f();
    } finally {
      if (--this.group === 0 && this.events !== null) {
        for (const ev of this.frees) this.events.push(ev);
        for (const ev of this.rest) this.events.push(ev);
        this.frees = [];
        this.rest = [];
      }
    }
  }

  // buf and tensor return the address of a buffer (by its dataId object)
  // and of a tensor, kept on the object under a symbol of the driver's
  // (cheaper than a map on every event); the first sight numbers it.
  buf(dataId) {
    let a = dataId[ADDR];
    if (a === undefined) {
      a = '0x' + ((++this.nBuf) * 2 ** 24).toString(16);
      dataId[ADDR] = a;
    }
    return a;
  }

  tensor(t) {
    let a = t[ADDR];
    if (a === undefined) {
      a = '0x' + (TENSOR_BASE + 16 * (++this.nTensor)).toString(16);
      t[ADDR] = a;
    }
    return a;
  }

  known(t) { return t[ADDR] !== undefined; }

  isVariable(t) { return t instanceof this.tf.Variable; }

  // recorded reports whether t is in the track list of an open scope and
  // not kept: whether it has a record in the model's scope stack.
  recorded(t) {
    if (t.kept) return false;
    for (const s of this.engine.state.scopeStack) if (s.track.includes(t)) return true;
    return false;
  }

  wrap() {
    const obs = this;
    const engine = this.engine;
    const backend = this.backend;
    const tf = this.tf;

    const write = backend.write;
    backend.write = function (values, shape, dtype) {
      const id = write.call(this, values, shape, dtype);
      const d = obs.backend.data.data.get(id);
      const bytes = d && d.values && d.values.byteLength !== undefined ? d.values.byteLength : 0;
      const a = obs.buf(id);
      obs.emit({ op: 'alloc', addr: a, size: bytes, kind: 'buffer' });
      obs.emit({ op: 'unregister', addr: a });
      return id;
    };
    // A reference is what the backend's count did, not what was asked:
    // one acquire per step up, one release per step down, and a free when
    // the buffer leaves the backend's data.
    const count = (dataId) => {
      const d = backend.data.data.get(dataId);
      return d === undefined ? null : d.refCount;
    };
    const incRef = backend.incRef;
    backend.incRef = function (dataId) {
      const before = count(dataId);
      obs.quiet++;
      try {
        incRef.call(this, dataId);
      } finally { obs.quiet--; }
      const after = count(dataId);
      for (let k = before; before !== null && after !== null && k < after; k++) {
        obs.emit({ op: 'acquire', addr: obs.buf(dataId) });
      }
    };
    const disposeData = backend.disposeData;
    backend.disposeData = function (dataId, force) {
      const before = count(dataId);
      obs.quiet++;
      let r;
      try {
        r = disposeData.call(this, dataId, force);
      } finally { obs.quiet--; }
      if (before !== null) {
        const after = count(dataId);
        const a = obs.buf(dataId);
        for (let k = after === null ? Math.max(before, 1) : before - after; k > 0; k--) {
          obs.emit({ op: 'release', addr: a });
        }
        if (after === null) obs.emit({ op: 'free', addr: a });
      }
      return r;
    };
    const readSync = backend.readSync;
    backend.readSync = function (dataId) {
      obs.readBuf(dataId);
      obs.quiet++;
      try {
        return readSync.call(this, dataId);
      } finally { obs.quiet--; }
    };
    const data = backend.data;
    const get = data.get;
    data.get = function (dataId) {
      if (obs.quiet === 0 && obs.kernel !== null) obs.readBuf(dataId);
      return get.call(this, dataId);
    };

    const E = Object.getPrototypeOf(engine);
    const trackTensor = E.trackTensor;
    E.trackTensor = function (a, be) {
      const r = trackTensor.call(this, a, be);
      if (obs.isVariable(a)) {
        if (obs.assigning !== a) obs.emit({ op: 'param_register', name: 'v' + a.name, addr: obs.buf(a.dataId) });
      } else {
        const t = obs.tensor(a);
        obs.emit({ op: 'struct_init', addr: t, size: 8, fields: [obs.buf(a.dataId)] });
        if (this.state.activeScope == null) obs.emit({ op: 'unregister', addr: t });
      }
      return r;
    };
    const track = E.track;
    E.track = function (t) {
      // Called by trackTensor (recorded above) and by endScope, for a
      // result the parent scope takes.
      const r = track.call(this, t);
      if (obs.inEndScope > 0 && this.state.activeScope != null && obs.known(t)) {
        obs.emit({ op: 'register', addr: obs.tensor(t) });
      }
      return r;
    };
    const disposeTensor = E.disposeTensor;
    E.disposeTensor = function (a) {
      const variable = obs.isVariable(a);
      if (!variable && obs.inEndScope === 0) obs.emit({ op: 'release', addr: obs.tensor(a) });
      return obs.grouped(() => {
        const before = this.state.numTensors;
        const r = disposeTensor.call(this, a);
        if (!variable && this.state.numTensors < before) obs.emit({ op: 'free', addr: obs.tensor(a), tensor: true });
        return r;
      });
    };
    const disposeVariable = E.disposeVariable;
    E.disposeVariable = function (v) {
      if (this.state.registeredVariables[v.name] === v) obs.emit({ op: 'param_release', name: 'v' + v.name });
      return disposeVariable.call(this, v);
    };
    const startScope = E.startScope;
    E.startScope = function (name) {
      obs.emit({ op: 'scope_enter' });
      return startScope.call(this, name);
    };
    const endScope = E.endScope;
    E.endScope = function (result) {
      const scope = this.state.activeScope;
      // A tensor in the result twice (tf.grads of [x, x]) has one record.
      const seen = new Set();
      for (const t of obs.tensorsIn(result)) {
        if (seen.has(t.id)) continue;
        seen.add(t.id);
        if (scope && t.scopeId === scope.id && !t.kept && !t.isDisposed && obs.known(t)) {
          obs.emit({ op: 'unregister', addr: obs.tensor(t) });
        }
      }
      obs.emit({ op: 'scope_exit' });
      obs.inEndScope++;
      try {
        return obs.grouped(() => endScope.call(this, result));
      } finally { obs.inEndScope--; }
    };
    const keep = E.keep;
    E.keep = function (t) {
      if (obs.known(t) && obs.recorded(t)) obs.emit({ op: 'unregister', addr: obs.tensor(t) });
      return keep.call(this, t);
    };
    const runKernel = E.runKernel;
    E.runKernel = function (kernelName, inputs, attrs) {
      for (const k in inputs) {
        const t = inputs[k];
        if (t instanceof tf.Tensor && obs.known(t)) obs.emit({ op: 'read', addr: obs.tensor(t) });
      }
      const outer = obs.kernel;
      const outerReads = obs.kernelReads;
      obs.kernel = kernelName;
      obs.kernelReads = new Set();
      try {
        return runKernel.call(this, kernelName, inputs, attrs);
      } finally {
        obs.kernel = outer;
        obs.kernelReads = outerReads;
      }
    };

    const V = tf.Variable.prototype;
    const assign = V.assign;
    V.assign = function (x) {
      if (x.dtype === this.dtype && tf.util.arraysEqual(x.shape, this.shape)) {
        obs.emit({ op: 'param_register', name: 'v' + this.name, addr: obs.buf(x.dataId) });
      }
      const outer = obs.assigning;
      obs.assigning = this;
      try {
        return assign.call(this, x);
      } finally { obs.assigning = outer; }
    };
    const T = tf.Tensor.prototype;
    const throwIfDisposed = T.throwIfDisposed;
    T.throwIfDisposed = function () {
      if (obs.known(this)) obs.emit({ op: 'read', addr: obs.tensor(this) });
      return throwIfDisposed.call(this);
    };
  }

  readBuf(dataId) {
    if (this.kernelReads !== null) {
      if (this.kernelReads.has(dataId)) return;
      this.kernelReads.add(dataId);
    }
    if (dataId[ADDR] !== undefined) this.emit({ op: 'read', addr: this.buf(dataId) });
  }

  // tensorsIn lists the tensors of a container, as tfjs's
  // getTensorsInContainer does (arrays and plain objects, nested).
  tensorsIn(c, out = [], seen = new Set()) {
    if (c == null || seen.has(c)) return out;
    if (c instanceof this.tf.Tensor) { out.push(c); return out; }
    if (typeof c !== 'object') return out;
    seen.add(c);
    for (const k of Object.keys(c)) this.tensorsIn(c[k], out, seen);
    return out;
  }
}

module.exports = { Observer };
