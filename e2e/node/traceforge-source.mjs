// traceforge-source.mjs — attribute Node LLM SDK calls for traceforge.
//
// Copy this file into your project. It sets the X-Traceforge-Source header
// (<file>:<line>:<function>) on every request an SDK sends, naming the first
// stack frame outside node_modules, node: internals and this file:
//
//   import OpenAI from 'openai';
//   import Anthropic from '@anthropic-ai/sdk';
//   import { traceforgeFetch, traceable } from './traceforge-source.mjs';
//
//   const openai = new OpenAI({ fetch: traceforgeFetch() });
//   // @anthropic-ai/sdk's middleware chain loses async stack frames: also
//   // wrap the client, which captures the stack when you call a method.
//   const anthropic = traceable(new Anthropic({ fetch: traceforgeFetch() }));
//
// The file is relative to process.cwd() (or the root option), slash-separated;
// file and function are percent-encoded as UTF-8 ('%', ':', space, control
// characters and every non-ASCII byte). A frame outside the root sends no
// header: the recording proxy then reports the call as unattributed.
// Stack lines are read as Node prints them, so with --enable-source-maps a
// TypeScript project gets its .ts files and lines.

import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HEADER = 'X-Traceforge-Source';

const HELPER_FILE = fileURLToPath(import.meta.url);
const captured = new AsyncLocalStorage();

/** Percent-encodes one field (file or function) of the header value. */
export function encodeField(s) {
  let out = '';
  for (const b of new TextEncoder().encode(s)) {
    if (b === 0x25 || b === 0x3a || b <= 0x20 || b >= 0x7f) {
      out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
    } else {
      out += String.fromCharCode(b);
    }
  }
  return out;
}

/** Formats {file, line, function} as the header value. */
export function formatSource(src) {
  return `${encodeField(src.file)}:${src.line}:${encodeField(src.function)}`;
}

function currentStack() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
  try {
    return new Error().stack ?? '';
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
  fn = (fn ?? '').replace(/ \[as [^\]]*\]$/, '').trim() || '<anonymous>';
  return { file, line: Number(line), function: fn };
}

function skipped(file, skip) {
  if (file.startsWith('node:') || file === HELPER_FILE || !path.isAbsolute(file)) return true;
  if (file.split(/[\\/]/).includes('node_modules')) return true;
  return skip.some((s) => file.includes(s));
}

/**
 * Returns {file, line, function} for the first frame of stack outside
 * node_modules, node: internals, this helper and the skip substrings, or null
 * when there is none or it lies outside root.
 */
export function sourceFromStack(stack, { root = process.cwd(), skip = [] } = {}) {
  for (const text of stack.split('\n').slice(1)) {
    const frame = parseFrame(text);
    if (!frame || skipped(frame.file, skip)) continue;
    const rel = path.relative(path.resolve(root), frame.file);
    if (rel === '' || rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel)) return null;
    if (frame.line < 1) return null;
    return { file: rel.split(path.sep).join('/'), line: frame.line, function: frame.function };
  }
  return null;
}

/**
 * Returns a fetch function for an SDK's `fetch` option that adds the header
 * (unless the request already has one). Options: root (default
 * process.cwd()), skip (substrings of file paths never to attribute), fetch
 * (the underlying fetch, default globalThis.fetch).
 */
export function traceforgeFetch({ root, skip = [], fetch: baseFetch = globalThis.fetch } = {}) {
  return function fetchWithSource(input, init = {}) {
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!headers.has(HEADER)) {
      const opts = { root, skip };
      const src = sourceFromStack(captured.getStore() ?? '', opts) ?? sourceFromStack(currentStack(), opts);
      if (src) headers.set(HEADER, formatSource(src));
    }
    return baseFetch(input, { ...init, headers });
  };
}

/**
 * Wraps an SDK client so that every method call records the caller's stack
 * for traceforgeFetch, which reads it even when the SDK's own async plumbing
 * has lost the caller's frames. Properties and results are otherwise those of
 * the client.
 */
export function traceable(client) {
  const proxies = new WeakMap();
  const wrap = (target) => {
    if (proxies.has(target)) return proxies.get(target);
    const proxy = new Proxy(target, {
      get(obj, key) {
        const value = Reflect.get(obj, key, obj);
        const desc = Reflect.getOwnPropertyDescriptor(obj, key);
        if (desc && !desc.configurable && !desc.writable) return value; // Proxy invariant
        if (typeof value === 'function') {
          return function traceforgeCapture(...args) {
            return captured.run(currentStack(), () => value.apply(obj, args));
          };
        }
        if (value !== null && typeof value === 'object' && !(value instanceof Promise)) return wrap(value);
        return value;
      },
    });
    proxies.set(target, proxy);
    return proxy;
  };
  return wrap(client);
}
