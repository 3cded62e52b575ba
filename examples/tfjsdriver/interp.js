'use strict';
// The Interpreter makes the calls of a tfjs program (drive/PROTOCOL.md,
// "tfjs programs") on tfjs and answers each with the events the Observer
// recorded while it ran. A tidy is a real tf.tidy: the calls between
// "tidy" and its "tidy_end" (or "tidy_throw") are read and made inside its
// function, so tfjs's own scope handling is what runs.

// The loss functions a gradient call names, as tfjs code.
function lossFns(tf) {
  return {
    sumSquare: (x) => tf.sum(tf.square(x)),
    meanExp: (x) => tf.mean(tf.exp(x)),
    sumRelu: (x) => tf.sum(tf.relu(x)),
    sumMul: (x, y) => tf.sum(tf.mul(x, y)),
    sumAdd: (x, y) => tf.sum(tf.add(x, y)),
  };
}

const UNARY = ['neg', 'exp', 'square', 'relu', 'abs', 'tanh'];
const BINARY = ['add', 'sub', 'mul', 'maximum'];
const REDUCE = ['sum', 'mean'];

// THROWN is what a tidy's function throws at tidy_throw: a plain object,
// so that no stack is captured for it.
const THROWN = { tidyThrow: true };

class Interpreter {
  constructor(tf, obs) {
    this.tf = tf;
    this.obs = obs;
    this.fns = lossFns(tf);
    this.handles = new Map(); // handle -> tensor, variable or optimizer
    this.depth = 0; // tidies open
    this.baseline = null;
    this.opening = false;
  }

  run(io) {
    this.io = io;
    for (;;) {
      const line = io.next();
      if (line === null) return;
      try {
        this.one(line);
      } catch (e) {
        if (!(e instanceof ResetInTidy)) throw e;
        // A program cut off inside a tidy: the tidy has ended, unwound by
        // the throw; the reset that came is made now.
        if (e.msg === null) return;
        this.reset();
        this.answer(e.msg.id, [], null);
      }
    }
  }

  // begin starts recording a call; the first call of a program opens the
  // program's scope, the outermost of the model's scope stack.
  begin() {
    this.obs.start();
    if (this.opening) {
      this.opening = false;
      this.obs.emit({ op: 'scope_enter' });
    }
  }

  // one makes the call on line and answers it; it returns the call, for
  // a tidy reading its own calls.
  one(line) {
    const msg = parse(line);
    if (msg.op === 'reset') {
      if (this.depth > 0) throw new ResetInTidy(msg);
      this.reset();
      this.answer(msg.id, [], null);
      return msg;
    }
    if (msg.op === 'end' && this.depth > 0) {
      this.begin();
      this.answer(msg.id, this.obs.stop(), new Error('tfjsdriver: end inside a tidy'));
      return msg;
    }
    if (msg.op === 'tidy') {
      this.tidy(msg);
      return msg;
    }
    this.begin();
    let err = null;
    let extra = null;
    try {
      extra = this.call(msg);
    } catch (e) {
      if (e === THROWN || e instanceof ResetInTidy) { this.obs.stop(); throw e; }
      err = e;
    }
    const events = this.obs.stop();
    this.answer(msg.id, events, err, extra);
    return msg;
  }

  // answer writes the answer to call id; events are JSON texts (Observer.emit).
  answer(id, events, err, extra) {
    let j = '{"id":' + id + ',"events":[' + events.join(',') + ']';
    if (err) {
      const message = String(err && err.message || err);
      j += ',"outcome":"refused","message":' + JSON.stringify(message);
      if (message === 'Tensor is disposed.') j += ',"kinds":["use-after-free"]';
    } else {
      j += ',"outcome":"done"';
    }
    if (extra) j += ',' + JSON.stringify(extra).slice(1, -1);
    this.io.write(j + '}');
  }

  // tidy runs tf.tidy with a function that reads and makes the calls up
  // to its tidy_end (returning the container it names) or tidy_throw.
  tidy(msg) {
    const tf = this.tf;
    this.begin();
    let endMsg = null;
    let thrown = null;
    let opened = false;
    try {
      tf.tidy(() => {
        opened = true;
        this.answer(msg.id, this.obs.stop(), null);
        this.depth++;
        try {
          for (;;) {
            const line = this.io.next();
            if (line === null) throw new ResetInTidy(null);
            const m = parse(line);
            if (m.op === 'tidy_end' || m.op === 'tidy_throw') {
              endMsg = m;
              this.obs.start();
              if (m.op === 'tidy_throw') throw THROWN;
              return this.container(m.result || [], m.container);
            }
            this.one(m);
          }
        } finally {
          this.depth--;
        }
      });
    } catch (e) {
      if (e === THROWN) thrown = e;
      else if (e instanceof ResetInTidy) { if (this.obs.events) this.obs.stop(); throw e; }
      else if (!opened) { this.answer(msg.id, this.obs.stop(), e); return; } else thrown = e;
    }
    const events = this.obs.stop() || [];
    if (endMsg === null) return; // unreachable: tf.tidy opened and ended without an end call
    if (thrown && thrown !== THROWN) this.answer(endMsg.id, events, thrown);
    else this.answer(endMsg.id, events, null);
  }

  container(result, kind) {
    const ts = result.map((h) => this.tensor(h));
    switch (kind) {
      case 'tensor': return ts[0];
      case 'array': return ts;
      case 'object': {
        const o = {};
        ts.forEach((t, i) => { o['k' + i] = t; });
        return o;
      }
      default: return undefined;
    }
  }

  get(h) {
    const x = this.handles.get(h);
    if (x === undefined) throw new Error(`tfjsdriver: no handle ${h}`);
    return x;
  }
  tensor(h) {
    const x = this.get(h);
    if (!(x instanceof this.tf.Tensor)) throw new Error(`tfjsdriver: handle ${h} is no tensor`);
    return x;
  }
  variable(h) {
    const x = this.get(h);
    if (!(x instanceof this.tf.Variable)) throw new Error(`tfjsdriver: handle ${h} is no variable`);
    return x;
  }
  fn(name) {
    const f = this.fns[name];
    if (!f) throw new Error(`tfjsdriver: no loss function ${JSON.stringify(name)}`);
    return f;
  }
  varsLoss(vars, fn) {
    const f = this.fn(fn);
    const vs = vars.map((h) => this.variable(h));
    return () => vs.map((v) => f(v)).reduce((a, b) => this.tf.add(a, b));
  }
  set(h, x) { this.handles.set(h, x); }

  call(m) {
    const tf = this.tf;
    const op = m.op;
    if (UNARY.includes(op)) return this.set(m.handle, tf[op](this.tensor(m.a)));
    if (BINARY.includes(op)) return this.set(m.handle, tf[op](this.tensor(m.a), this.tensor(m.b)));
    if (REDUCE.includes(op)) return this.set(m.handle, tf[op](this.tensor(m.a)));
    switch (op) {
      case 'tensor':
        return this.set(m.handle, tf.tensor(m.values || [], m.shape || [], 'float32'));
      case 'matMul':
        return this.set(m.handle, tf.matMul(this.tensor(m.a), this.tensor(m.b)));
      case 'reshape':
        return this.set(m.handle, tf.reshape(this.tensor(m.a), m.shape || []));
      case 'clone':
        return this.set(m.handle, tf.clone(this.tensor(m.a)));
      case 'expandDims':
        return this.set(m.handle, tf.expandDims(this.tensor(m.a), 0));
      case 'squeeze':
        return this.set(m.handle, tf.squeeze(this.tensor(m.a)));
      case 'keep':
        tf.keep(this.tensor(m.target));
        return null;
      case 'dispose': {
        const xs = m.targets.map((h) => this.get(h));
        if (m.container === 'tensor') xs[0].dispose();
        else tf.dispose(this.container(m.targets, m.container));
        return null;
      }
      case 'variable':
        return this.set(m.handle, tf.variable(this.tensor(m.a), m.trainable !== false));
      case 'assign':
        this.variable(m.target).assign(this.tensor(m.a));
        return null;
      case 'disposeVariables':
        tf.disposeVariables();
        return null;
      case 'grad':
        return this.set(m.handle, tf.grad(this.fn(m.fn))(this.tensor(m.a)));
      case 'grads': {
        const gs = tf.grads(this.fn(m.fn))([this.tensor(m.a), this.tensor(m.b)]);
        m.handles.forEach((h, i) => this.set(h, gs[i]));
        return null;
      }
      case 'valueAndGrad': {
        const { value, grad } = tf.valueAndGrad(this.fn(m.fn))(this.tensor(m.a));
        this.set(m.handles[0], value);
        this.set(m.handles[1], grad);
        return null;
      }
      case 'variableGrads': {
        const vs = m.vars.map((h) => this.variable(h));
        const { value, grads } = tf.variableGrads(this.varsLoss(m.vars, m.fn), vs);
        this.set(m.handles[0], value);
        vs.forEach((v, i) => this.set(m.handles[i + 1], grads[v.name]));
        return null;
      }
      case 'optimizer': {
        const o = m.kind === 'sgd' ? tf.train.sgd(0.1)
          : m.kind === 'momentum' ? tf.train.momentum(0.1, 0.9)
            : m.kind === 'adam' ? tf.train.adam(0.1)
              : null;
        if (o === null) throw new Error(`tfjsdriver: no optimizer ${JSON.stringify(m.kind)}`);
        return this.set(m.handle, o);
      }
      case 'minimize': {
        const o = this.get(m.target);
        o.minimize(this.varsLoss(m.vars, m.fn), false, m.vars.map((h) => this.variable(h)));
        return null;
      }
      case 'dataSync':
        this.tensor(m.target).dataSync();
        return null;
      case 'arraySync':
        this.tensor(m.target).arraySync();
        return null;
      case 'end':
        return this.end();
      default:
        throw new Error(`tfjsdriver: no call ${JSON.stringify(op)}`);
    }
  }

  // end tears the program down as a well-behaved caller would: every
  // tensor it holds disposed, every optimizer, every variable it made;
  // then it says how far tfjs's memory counters are from where the
  // program started. The events are the teardown's, then end.
  end() {
    const tf = this.tf;
    const hs = [...this.handles.keys()].sort((a, b) => a - b);
    for (const h of hs) {
      const x = this.handles.get(h);
      if (x instanceof tf.Variable) continue;
      if (x instanceof tf.Tensor) x.dispose();
    }
    for (const h of hs) {
      const x = this.handles.get(h);
      if (!(x instanceof tf.Tensor) && x && typeof x.dispose === 'function') x.dispose();
    }
    // A variable still registered: tf.disposeVariables() does not mark
    // the variables it disposes (isDisposed stays false), and disposing
    // one again drops its buffer's reference twice (FINDINGS.md).
    const registered = tf.engine().registeredVariables;
    for (const h of hs) {
      const x = this.handles.get(h);
      if (x instanceof tf.Variable && registered[x.name] === x) x.dispose();
    }
    this.handles.clear();
    this.obs.emit({ op: 'scope_exit' });
    this.obs.emit({ op: 'end' });
    const m = tf.memory();
    const b = this.baseline;
    return {
      memory: {
        numTensors: m.numTensors - b.numTensors,
        numDataBuffers: m.numDataBuffers - b.numDataBuffers,
        numBytes: m.numBytes - b.numBytes,
        variables: Object.keys(tf.engine().registeredVariables).length - b.variables,
      },
    };
  }

  // reset throws away what the last program left, recording nothing, and
  // notes where tfjs's counters stand; the program's first event opens the
  // scope its untracked tensors live outside of.
  reset() {
    const tf = this.tf;
    const engine = tf.engine();
    while (engine.state.scopeStack.length > 0) engine.endScope();
    for (const x of this.handles.values()) {
      try { if (x && typeof x.dispose === 'function') x.dispose(); } catch (e) { /* a broken program's leftovers */ }
    }
    this.handles.clear();
    try { tf.disposeVariables(); } catch (e) { /* ditto */ }
    const m = tf.memory();
    this.baseline = {
      numTensors: m.numTensors, numDataBuffers: m.numDataBuffers, numBytes: m.numBytes,
      variables: Object.keys(engine.registeredVariables).length,
    };
    this.opening = true;
  }
}

class ResetInTidy extends Error {
  constructor(msg) { super('reset inside a tidy'); this.msg = msg; }
}

// parse reads a protocol line (or passes a message already read).
function parse(line) {
  if (typeof line !== 'string') return line;
  try {
    return JSON.parse(line);
  } catch (e) {
    process.stderr.write(`tfjsdriver: not JSON: ${line.slice(0, 200)}\n`);
    process.exit(3);
  }
}

module.exports = { Interpreter };
