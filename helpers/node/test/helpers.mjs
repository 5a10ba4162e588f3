// Shared by the package's tests: an echo server that records the header of
// every request, marked lines, and the fake library put under node_modules.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

const FAKELIB = fileURLToPath(new URL('../fixtures/fakelib/', import.meta.url));

/** Copies the fake library (fixtures/fakelib) to <dir>/node_modules/fakelib and returns its entry file. */
export function writeFakeLib(dir) {
  const lib = path.join(dir, 'node_modules', 'fakelib');
  mkdirSync(path.dirname(lib), { recursive: true });
  cpSync(FAKELIB, lib, { recursive: true });
  return path.join(lib, 'index.cjs');
}
