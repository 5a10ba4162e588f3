'use strict';
// traceforge-source: the one implementation behind every entry point. It is
// CommonJS so that Jest's CommonJS runtime can load it too; the package's
// entry points for import are ESM files that re-export from here.
//
// A source is {file, line, function}: file relative to the project root,
// slash-separated. It is found, in this order, from
//   1. the synchronous (and V8 async) stack of the fetch call,
//   2. the innermost withSource() scope,
//   3. the causal context: every async resource remembers the application
//      frames current when it was created (or inherits its creator's), so
//      work a library queues keeps the application line that started it,
//   4. the running test, when a test-runner setup file registered one.
// Frames under node_modules, node: internals and this package are never
// application frames.

const { AsyncLocalStorage, createHook, executionAsyncResource } = require('node:async_hooks');
const path = require('node:path');
const { fileURLToPath } = require('node:url');

const HEADER = 'X-Traceforge-Source';
const HELPER_DIR = __dirname;

// State shared by every copy of this module in the process (Jest loads one
// per test file; an app may hold two versions of the package).
const STATE_KEY = Symbol.for('traceforge-source.state');
const CONTEXT = Symbol.for('traceforge-source.context');
const state =
  process[STATE_KEY] ??
  (process[STATE_KEY] = {
    hook: null, // the async hook, once enabled
    testHook: null, // the node:test hook, once enabled
    lastNodeTest: null, // the node:test test whose code ran last
    scopes: new AsyncLocalStorage(), // withSource scopes
    current: null, // the running test a runner setup registered: {file, line?, name}
    inHook: false,
  });

const MAX_FRAMES = 8; // application frames kept per async resource
const STACK_LIMIT = 64;

/** Percent-encodes one field (file or function) of the header value. */
function encodeField(s) {
  let out = '';
  for (const b of new TextEncoder().encode(String(s))) {
    if (b === 0x25 || b === 0x3a || b <= 0x20 || b >= 0x7f) {
      out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
    } else {
      out += String.fromCharCode(b);
    }
  }
  return out;
}

/** Formats {file, line, function} as the header value. */
function formatSource(src) {
  return `${encodeField(src.file)}:${src.line}:${encodeField(src.function)}`;
}

function stackNow() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = STACK_LIMIT;
  try {
    const stack = new Error().stack;
    return typeof stack === 'string' ? stack : ''; // a foreign prepareStackTrace may return anything
  } catch {
    return '';
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const FRAME = /^\s*at (?:async )?(?:(.*?) \((.+):(\d+):\d+\)|(.+):(\d+):\d+)$/;

function parseFrame(text) {
  const m = FRAME.exec(text);
  if (!m) return null;
  let [, fn, file, line] = m;
  if (file === undefined) [file, line] = [m[4], m[5]];
  if (file.startsWith('file://')) {
    try {
      file = fileURLToPath(file);
    } catch {
      return null;
    }
  }
  fn = (fn ?? '').replace(/^new /, '').replace(/ \[as [^\]]*\]$/, '').trim() || '<anonymous>';
  return { file, line: Number(line), function: fn };
}

/** Whether a frame's file is a library's: node_modules, node: internals, this package, no real file. */
function isLibrary(file) {
  if (file.startsWith('node:') || !path.isAbsolute(file)) return true;
  if (file.startsWith(HELPER_DIR + path.sep)) return true;
  return file.split(/[\\/]/).includes('node_modules');
}

/** The application frames of a stack, innermost first. */
function appFrames(stack, max = Infinity) {
  const out = [];
  for (const text of stack.split('\n').slice(1)) {
    const frame = parseFrame(text);
    if (!frame || isLibrary(frame.file)) continue;
    out.push(frame);
    if (out.length >= max) break;
  }
  return out;
}

function isOutside(rel) {
  return rel === '' || rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel);
}

/** Makes a frame's file relative to root; null when it lies outside. */
function relativize(frame, root) {
  const rel = path.relative(root, frame.file);
  if (isOutside(rel) || !(frame.line >= 1)) return null;
  return { file: rel.split(path.sep).join('/'), line: frame.line, function: frame.function };
}

/**
 * Picks from application frames the first one not matching skip. Returns
 * the relative source, null when that frame lies outside root, or undefined
 * when no frame qualifies (the next way of finding a source is tried).
 */
function pick(frames, root, skip) {
  for (const frame of frames) {
    if (skip.some((s) => frame.file.includes(s))) continue;
    return relativize(frame, root);
  }
  return undefined;
}

/**
 * Returns {file, line, function} for the first frame of a stack string
 * outside node_modules, node: internals, this package and the skip
 * substrings, or null when there is none or it lies outside root.
 */
function sourceFromStack(stack, { root = process.cwd(), skip = [] } = {}) {
  return pick(appFrames(stack), path.resolve(root), skip) ?? null;
}

// ---- causality -----------------------------------------------------------

function contextOf(resource) {
  try {
    return resource?.[CONTEXT];
  } catch {
    return undefined;
  }
}

/** The causal context of the code running now: {frames, test} or undefined. */
function currentContext() {
  return contextOf(executionAsyncResource());
}

function isNodeTest(resource) {
  // node:test runs every test and suite inside its Test object, an AsyncResource.
  const name = resource?.constructor?.name;
  return (name === 'Test' || name === 'Suite') && typeof resource.runInAsyncScope === 'function';
}

function init(asyncId, type, triggerAsyncId, resource) {
  if (state.inHook) return;
  state.inHook = true;
  try {
    const parent = currentContext();
    const frames = appFrames(stackNow(), MAX_FRAMES);
    const test = type === 'Test' && isNodeTest(resource) ? resource : parent?.test;
    const cur = state.current;
    if (cur && cur.line === undefined && cur.file) {
      // Jest, Vitest without task locations: the first frame in the test
      // file seen while the test runs is the test's line.
      const f = frames.find((fr) => fr.file === cur.file);
      if (f) cur.line = f.line;
    }
    let ctx = parent;
    if (test === resource) {
      // A node:test test starts its own causality; its creation frames
      // hold the line that declared it.
      ctx = { frames: [], test, created: frames };
    } else if (frames.length > 0) {
      ctx = { frames, test };
    }
    if (ctx) resource[CONTEXT] = ctx;
  } catch {
    // A resource that takes no properties keeps no context.
  } finally {
    state.inHook = false;
  }
}

/**
 * Whether causality is wanted: an explicit option wins; by default it is on
 * while traceforge runs the process (TRACEFORGE_URL is set by `record` and
 * `verify` for their COMMAND and in the exports they print), because it
 * costs a stack capture for every async resource.
 */
function causalityWanted(option) {
  if (option === true || option === false) return option;
  return Boolean(process.env.TRACEFORGE_URL);
}

/**
 * Starts tracking causality across async boundaries (idempotent).
 * traceforgeFetch() and the test-runner setups call it when TRACEFORGE_URL
 * is set.
 */
function enableCausality() {
  if (!state.hook) state.hook = createHook({ init }).enable();
}

/** Stops tracking causality (for tests and for applications that opt out). */
function disableCausality() {
  if (state.hook) {
    state.hook.disable();
    state.hook = null;
  }
}

function before() {
  const r = executionAsyncResource();
  if (isNodeTest(r)) state.lastNodeTest = r;
}

/**
 * Tracks the node:test test whose code runs, so a call whose async context
 * was lost (work a library runs from a loop it started at import) still
 * finds the running test. traceforge-source/node-test calls it; a no-op
 * unless TRACEFORGE_URL is set.
 */
function enableNodeTestTracking() {
  if (!causalityWanted()) return;
  enableCausality();
  if (!state.testHook) state.testHook = createHook({ before }).enable();
}

// ---- scopes and tests ------------------------------------------------------

/**
 * Runs fn in a scope whose calls without an application frame on the stack
 * are attributed to the line that called withSource (withSource(fn)) or to an
 * explicit source (withSource({file, line, function}, fn), file relative to
 * the project root). Returns fn's result.
 */
function withSource(srcOrFn, maybeFn) {
  if (typeof srcOrFn === 'function') {
    return state.scopes.run({ frames: appFrames(stackNow()) }, srcOrFn);
  }
  const src = srcOrFn;
  if (typeof maybeFn !== 'function') {
    throw new TypeError('traceforge-source: withSource(fn) or withSource({file, line, function}, fn): fn must be a function');
  }
  if (!src || typeof src.file !== 'string' || src.file === '' || !Number.isInteger(src.line) || src.line < 1) {
    throw new TypeError(
      'traceforge-source: withSource: the source must be {file: "relative/path.js", line: N >= 1, function?: "name"}',
    );
  }
  const explicit = { file: src.file, line: src.line, function: src.function || '<anonymous>' };
  return state.scopes.run({ explicit }, maybeFn);
}

/**
 * Registers the running test (used by the runner setup files): {file
 * (absolute), line (optional), name}, or null between tests.
 */
function setCurrentTest(test) {
  if (causalityWanted()) enableCausality();
  state.current = test ? { file: test.file, line: test.line ?? undefined, name: test.name } : null;
}

function testName(test) {
  const names = [];
  for (let t = test; t && t.parent; t = t.parent) names.unshift(String(t.name));
  return names.join(' > ');
}

/** The running test as {file, line?, name} from node:test or a runner setup. */
function runningTest(ctx) {
  let t = ctx?.test;
  if (t && !t.parent) t = null; // the root test holds no test's code
  if (!t) {
    // Tests run one at a time within a file: the last one entered, or the
    // nearest of its parents that has not finished.
    for (t = state.lastNodeTest; t && t.finished; t = t.parent);
    if (t && !t.parent) t = null; // the root test
  }
  if (t) {
    const loc = t.loc;
    if (loc?.file) {
      const file = loc.file.startsWith('file://') ? fileURLToPath(loc.file) : loc.file;
      return { file, line: loc.line, name: testName(t) };
    }
    const file = process.argv[1] ? path.resolve(process.argv[1]) : undefined;
    const created = contextOf(t)?.created ?? [];
    const f = created.find((fr) => fr.file === file) ?? created[0];
    return f ? { file: f.file, line: f.line, name: testName(t) } : null;
  }
  return state.current;
}

function testSource(ctx, root) {
  const t = runningTest(ctx);
  if (!t || !t.file) return null;
  let line = t.line;
  // The line the runner does not tell: the first frame in the test file
  // found through causality.
  const f = (ctx?.frames ?? []).find((fr) => fr.file === t.file);
  if (f && line === undefined) line = f.line;
  if (!(line >= 1)) return null;
  return relativize({ file: t.file, line, function: t.name || '<anonymous>' }, root);
}

/**
 * Returns the source of a call made now, as {file, line, function}, or null.
 * Options: root (default process.cwd()), skip (substrings of file paths
 * never to attribute).
 */
function currentSource({ root, skip = [] } = {}) {
  const r = path.resolve(root ?? process.cwd());
  const fromStack = pick(appFrames(stackNow()), r, skip);
  if (fromStack !== undefined) return fromStack;
  const scope = state.scopes.getStore();
  if (scope?.explicit) return scope.explicit;
  if (scope) {
    const s = pick(scope.frames, r, skip);
    if (s !== undefined) return s;
  }
  const ctx = currentContext();
  const causal = pick(ctx?.frames ?? [], r, skip);
  if (causal !== undefined) return causal;
  return testSource(ctx, r);
}

/**
 * Returns a fetch function for an SDK's `fetch` option that adds the header
 * (unless the request already has one). Options: root (default
 * process.cwd()), skip (substrings of file paths never to attribute), fetch
 * (the underlying fetch, default globalThis.fetch), causality (track async
 * resources so queued work keeps its application line; default: on when
 * TRACEFORGE_URL is set).
 */
function traceforgeFetch({ root, skip = [], fetch: baseFetch, causality } = {}) {
  if (causalityWanted(causality)) enableCausality();
  return function fetchWithSource(input, init = {}) {
    const send = baseFetch ?? globalThis.fetch;
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!headers.has(HEADER)) {
      const src = currentSource({ root, skip });
      if (src) headers.set(HEADER, formatSource(src));
    }
    return send(input, { ...init, headers });
  };
}

module.exports = {
  HEADER,
  currentSource,
  disableCausality,
  enableCausality,
  enableNodeTestTracking,
  encodeField,
  formatSource,
  setCurrentTest,
  sourceFromStack,
  traceforgeFetch,
  withSource,
};
