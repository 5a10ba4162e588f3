// Shared by the package's tests: an echo server that records the header of
// every request, marked lines, and a fake library living under node_modules.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

export const HEADER_LC = 'x-traceforge-source';

/** Starts a loopback server answering every request with its header; returns {url, seen, close}. */
export async function echoServer() {
  const seen = new Map(); // path -> header value or null
  const server = http.createServer((req, res) => {
    const value = req.headers[HEADER_LC] ?? null;
    seen.set(req.url, value);
    res.setHeader('content-type', 'text/plain');
    res.end(value ?? '<none>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    seen,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The 1-based line of file that ends with "// mark:<name>". */
export function markerLine(file, name) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.endsWith(`// mark:${name}`));
  assert.notEqual(i, -1, `no line marked ${name} in ${file}`);
  return i + 1;
}

// A library that sends from its own machinery, as LangChain JS and the AI
// SDK do: queued() calls fetch from a timer the call created (the caller's
// frames are gone from the stack, async causality still links them);
// detached() hands the call to a loop started when the library was loaded
// (no application frame anywhere, not even through causality).
const FAKELIB = `
const jobs = [];
const loop = setInterval(() => {
  const job = jobs.shift();
  if (job) job.fetch(job.url).then((r) => r.text()).then(job.resolve, job.reject);
}, 1);
loop.unref();

export function queued(fetch, url) {
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      fetch(url).then((r) => r.text()).then(resolve, reject);
    }, 1);
  });
}

export function detached(fetch, url) {
  return new Promise((resolve, reject) => jobs.push({ fetch, url, resolve, reject }));
}
`;

/** Writes the fake library as <dir>/node_modules/fakelib and returns its entry file. */
export function writeFakeLib(dir) {
  const lib = path.join(dir, 'node_modules', 'fakelib');
  mkdirSync(lib, { recursive: true });
  writeFileSync(path.join(lib, 'package.json'), JSON.stringify({ name: 'fakelib', type: 'module', exports: './index.js' }));
  writeFileSync(path.join(lib, 'index.js'), FAKELIB);
  return path.join(lib, 'index.js');
}
