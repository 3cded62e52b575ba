#!/usr/bin/env node
// A tlcheck-drive driver for TensorFlow.js: tfjs-core 4.22.0 on its CPU
// backend, driven with tfjs programs (drive/PROTOCOL.md, "tfjs programs").
//
//   node examples/tfjsdriver [--faults=a,b]
//
// It reads calls from stdin and answers each with what tfjs really did,
// observed by wrapping tfjs's engine and backend at run time (never by
// editing node_modules): each data buffer the backend writes is an object
// (alloc), each reference the backend adds (incRef) an acquire, each it drops
// (disposeData) a release, each buffer it really deletes a free; each tensor
// the engine tracks a struct over its buffer, recorded in the tidy scope
// open, released when disposed and freed when the engine untracks it; each
// variable a parameter holding its buffer; each read of a buffer by a kernel
// or a read of a tensor's values a read. tfjs's own refusal ("Tensor is
// disposed.") is a refusal of kind use-after-free. --faults switches on bugs
// in tfjs itself, patched in at run time (see faults.js).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const mod = require('node:module');

// Everything tfjs prints (its "running in Node.js" banner, warnings) goes to
// stderr: stdout carries the protocol only.
console.log = console.info = console.warn = console.error = (...a) => {
  process.stderr.write(a.map(String).join(' ') + '\n');
};

const faults = require('./faults');

function parseFlags(argv) {
  const on = new Set();
  for (const a of argv) {
    if (a.startsWith('--faults=')) {
      for (const f of a.slice('--faults='.length).split(',')) {
        if (f === '') continue;
        if (!faults.names.includes(f)) {
          process.stderr.write(`tfjsdriver: unknown fault ${JSON.stringify(f)}; the faults are ${faults.names.join(', ')}\n`);
          process.exit(2);
        }
        on.add(f);
      }
    } else if (a === '--list-faults') {
      process.stdout.write(faults.names.join('\n') + '\n');
      process.exit(0);
    } else {
      process.stderr.write(`tfjsdriver: unknown argument ${JSON.stringify(a)}\n`);
      process.exit(2);
    }
  }
  return on;
}

// The gradients of tfjs-core are not in its Node.js bundle; they are ES
// modules whose imports name files without their ".js", which Node's loader
// does not add. A resolve hook adds it, for the gradient files only.
const RESOLVE_HOOK = 'data:text/javascript,' + encodeURIComponent(`
export async function resolve(spec, ctx, next) {
  try { return await next(spec, ctx); } catch (e) {
    if (spec.startsWith('.') && !spec.endsWith('.js')) return next(spec + '.js', ctx);
    throw e;
  }
}`);
const GRADIENTS = ['Abs', 'Add', 'Sub', 'Multiply', 'Neg', 'Exp', 'Square', 'Relu', 'Sum', 'Mean',
  'BatchMatMul', 'Reshape', 'Maximum', 'Identity', 'Tanh'];

async function loadTf() {
  const tf = require('@tensorflow/tfjs-core');
  require('@tensorflow/tfjs-backend-cpu');
  mod.register(RESOLVE_HOOK);
  const dir = path.dirname(require.resolve('@tensorflow/tfjs-core/package.json'));
  for (const n of GRADIENTS) {
    const m = await import(path.join(dir, 'dist', 'gradients', n + '_grad.js'));
    for (const k of Object.keys(m)) tf.registerGradient(m[k]);
  }
  await tf.setBackend('cpu');
  return tf;
}

async function main() {
  const on = parseFlags(process.argv.slice(2));
  const tf = await loadTf();
  const { Observer } = require('./observe');
  const { Interpreter } = require('./interp');
  faults.install(tf, on); // beneath the Observer: it records what the faulty tfjs does
  const obs = new Observer(tf);
  const interp = new Interpreter(tf, obs);
  const version = require('@tensorflow/tfjs-core/package.json').version;
  const hello = {
    protocol: 'tlcheck-drive', version: 1, layers: [2], programs: ['tfjs'],
    source: `TensorFlow.js ${version} (tfjs-core, CPU backend) over tlcheck-drive` +
      (on.size ? `, faults ${[...on].join(',')}` : ''),
    notes: [
      'tfjs 4.22.0 departs from its memory contract in four known ways (examples/tfjsdriver/FINDINGS.md: ' +
      'MomentumOptimizer.dispose leaks, a variable disposed twice frees a live buffer, ops take disposed tensors, ' +
      'optimizer slots are kept by position); generated programs keep clear of them unless asked (drive.TfjsGenOptions.Known)',
    ],
  };
  const io = new LineIO();
  io.write(JSON.stringify(hello));
  interp.run(io);
  io.flush();
}

// LineIO reads stdin and writes stdout synchronously: a tidy's function is
// synchronous in tfjs, so the calls inside it are read while it runs.
// Answers are flushed whenever no input is waiting.
class LineIO {
  constructor() {
    this.buf = Buffer.alloc(1 << 16);
    this.pending = '';
    this.out = [];
    this.eof = false;
  }
  write(s) { this.out.push(s); }
  flush() {
    if (this.out.length === 0) return;
    const b = Buffer.from(this.out.join('\n') + '\n');
    this.out = [];
    let off = 0;
    while (off < b.length) {
      try {
        off += fs.writeSync(1, b, off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
    }
  }
  // next returns the next line, or null at the end of input.
  next() {
    for (;;) {
      const nl = this.pending.indexOf('\n');
      if (nl >= 0) {
        const line = this.pending.slice(0, nl).replace(/\r$/, '');
        this.pending = this.pending.slice(nl + 1);
        if (line.trim() === '') continue;
        return line;
      }
      if (this.eof) {
        const rest = this.pending;
        this.pending = '';
        return rest.trim() === '' ? null : rest;
      }
      this.flush();
      let n;
      try {
        n = fs.readSync(0, this.buf, 0, this.buf.length, null);
      } catch (e) {
        if (e.code === 'EAGAIN') continue;
        if (e.code === 'EOF') n = 0; else throw e;
      }
      if (n === 0) this.eof = true;
      else this.pending += this.buf.toString('utf8', 0, n);
    }
  }
}

main().catch((e) => {
  process.stderr.write(`tfjsdriver: ${e && e.stack || e}\n`);
  process.exit(1);
});
