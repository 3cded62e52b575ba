'use strict';
// Faults in tfjs itself, switched on with --faults=a,b and patched in at
// run time by wrapping tfjs's engine, backend and classes (node_modules is
// never edited). They are installed before the Observer wraps the same
// functions, so what the driver records is what the faulty tfjs does.
// Each is the shape of a bug tfjs had, or of one its users reported.

const catalog = {
  // A data-sharing op that does not add a reference: the CPU backend's
  // reshape returns the input's dataId without backend.incRef, so the
  // reshaped tensor and its input share one reference (tfjs's reshape and
  // its friends were moved to refcounted sharing in 3.x; a kernel that
  // forgets the incRef frees the data under the other tensor).
  'reshape-no-incref': (tf, ctx) => {
    const be = tf.backend();
    const incRef = be.incRef;
    be.incRef = function (dataId) {
      if (ctx.kernel === 'Reshape') return;
      return incRef.call(this, dataId);
    };
  },

  // tidy that forgets keep: endScope disposes every tensor of the scope
  // but the result, kept ones too.
  'tidy-forgets-keep': (tf, ctx) => {
    const E = Object.getPrototypeOf(tf.engine());
    E.endScope = function (result) {
      const toParent = tensorsIn(tf, result);
      const ids = new Set(toParent.map((t) => t.id));
      for (const t of this.state.activeScope.track) {
        if (!ids.has(t.id)) t.dispose();
      }
      const old = this.state.scopeStack.pop();
      this.state.activeScope = this.state.scopeStack.length === 0 ? null
        : this.state.scopeStack[this.state.scopeStack.length - 1];
      for (const t of toParent) {
        if (!t.kept && t.scopeId === old.id) this.track(t);
      }
    };
  },

  // tidy that leaks when its function throws: the scope is ended only on
  // the way out of a function that returned (tfjs's scopedRun ends it in a
  // catch too), so a throw leaves the scope open and its tensors alive.
  'tidy-leaks-on-throw': (tf) => {
    const E = Object.getPrototypeOf(tf.engine());
    E.scopedRun = function (start, end, f) {
      start();
      const res = f();
      end();
      return res;
    };
  },

  // dispose that drops a reference twice: disposeData of a buffer that
  // other tensors share decrements its count twice.
  'dispose-drops-twice': (tf) => {
    const be = tf.backend();
    const disposeData = be.disposeData;
    be.disposeData = function (dataId, force) {
      if (this.data.has(dataId) && this.data.get(dataId).refCount > 1) this.data.get(dataId).refCount--;
      return disposeData.call(this, dataId, force);
    };
  },

  // A variable's dispose that leaves its buffer: disposeVariable forgets
  // the variable but never disposes its tensor.
  'variable-dispose-leaves-buffer': (tf) => {
    const E = Object.getPrototypeOf(tf.engine());
    E.disposeVariable = function (v) {
      if (this.state.registeredVariables[v.name] != null) delete this.state.registeredVariables[v.name];
    };
  },

  // variableGrads that leaks an intermediate: the tensors the tape saved
  // for backward while it ran are never disposed (users' reports of
  // variableGrads leaking in training loops, tensorflow/tfjs#5980 and
  // friends).
  'variablegrads-leaks-saved': (tf, ctx) => {
    const E = Object.getPrototypeOf(tf.engine());
    const save = E.saveTensorsForBackwardMode;
    E.saveTensorsForBackwardMode = function (tensors) {
      const saved = save.call(this, tensors);
      if (ctx.inVariableGrads > 0) for (const t of saved) t.leakedByFault = true;
      return saved;
    };
    const dispose = tf.Tensor.prototype.dispose;
    tf.Tensor.prototype.dispose = function () {
      if (this.leakedByFault) return;
      return dispose.call(this);
    };
    const variableGrads = tf.variableGrads;
    tf.variableGrads = function (f, varList) {
      ctx.inVariableGrads++;
      try {
        return variableGrads(f, varList);
      } finally { ctx.inVariableGrads--; }
    };
  },

  // An optimizer whose dispose leaves its slots: AdamOptimizer.dispose
  // disposes its beta powers but not the moment variables it made for
  // each variable it minimized. The shape of tensorflow/tfjs#4647, in
  // which MomentumOptimizer.dispose leaves a tensor behind (tfjs 4.22.0
  // still does, its learning-rate scalar: FINDINGS.md; programs of the
  // real tfjs make no momentum optimizer unless asked).
  'adam-dispose-leaves-slots': (tf) => {
    tf.AdamOptimizer.prototype.dispose = function () {
      this.accBeta1.dispose();
      this.accBeta2.dispose();
    };
  },

  // A kernel that reads its input after a dispose inside tidy: inside a
  // tidy, Exp drops its input's reference on the buffer (as a kernel
  // disposing what it took for an intermediate) before it reads it.
  'kernel-reads-disposed-input': (tf) => {
    const E = Object.getPrototypeOf(tf.engine());
    const runKernel = E.runKernel;
    E.runKernel = function (kernelName, inputs, attrs) {
      if (kernelName === 'Exp' && this.state.activeScope != null && inputs.x) {
        tf.backend().disposeData(inputs.x.dataId);
      }
      return runKernel.call(this, kernelName, inputs, attrs);
    };
  },
};

function tensorsIn(tf, c, out = [], seen = new Set()) {
  if (c == null || seen.has(c)) return out;
  if (c instanceof tf.Tensor) { out.push(c); return out; }
  if (typeof c !== 'object') return out;
  seen.add(c);
  for (const k of Object.keys(c)) tensorsIn(tf, c[k], out, seen);
  return out;
}

// install patches the faults named in on into tfjs.
function install(tf, on) {
  const ctx = { kernel: null, inVariableGrads: 0 };
  if (on.size === 0) return;
  const E = Object.getPrototypeOf(tf.engine());
  const runKernel = E.runKernel;
  E.runKernel = function (kernelName, inputs, attrs) {
    const outer = ctx.kernel;
    ctx.kernel = kernelName;
    try {
      return runKernel.call(this, kernelName, inputs, attrs);
    } finally { ctx.kernel = outer; }
  };
  for (const name of on) catalog[name](tf, ctx);
}

module.exports = { names: Object.keys(catalog), install };
