// Run by packaging/tests/test_packages.py in a clean npm project where the
// built traceforge tarball (and this platform's @traceforge/cli-* tarball)
// were installed offline: the Node helper as the traceforge package exports it.
import assert from 'node:assert/strict';
import { readFileSync, realpathSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { traceforgeFetch, withSource, currentSource } from 'traceforge';

const here = fileURLToPath(import.meta.url);
const pkgDir = realpathSync(path.join(path.dirname(here), 'node_modules', 'traceforge'));

assert.equal(typeof traceforgeFetch, 'function');
assert.equal(typeof withSource, 'function');
assert.equal(typeof currentSource, 'function');

// require('traceforge') is the CommonJS build of the same helper.
const require = createRequire(import.meta.url);
const cjs = require('traceforge');
assert.equal(typeof cjs.traceforgeFetch, 'function');
assert.equal(typeof cjs.withSource, 'function');

// The runner setups resolve into the installed package.
for (const sub of ['node-test', 'vitest', 'jest']) {
  const file = fileURLToPath(import.meta.resolve(`traceforge/${sub}`));
  assert.ok(realpathSync(file).startsWith(pkgDir + path.sep), `traceforge/${sub} -> ${file}`);
}
assert.ok(realpathSync(require.resolve('traceforge/jest')).startsWith(pkgDir + path.sep));

// A real request to a loopback server carries this file's line.
const seen = [];
const server = http.createServer((req, res) => {
  seen.push(req.headers['x-traceforge-source'] ?? null);
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/v1/chat/completions`;
const fetchWithSource = traceforgeFetch();

async function callModel() {
  return fetchWithSource(url, { method: 'POST', body: '{"model":"m"}' }); // CALL-LINE
}

const res = await callModel();
assert.equal(res.status, 200);
await res.arrayBuffer();
server.close();
const line = readFileSync(here, 'utf8').split('\n').findIndex((l) => l.includes('// CALL' + '-LINE')) + 1;
assert.deepEqual(seen, [`smoke.mjs:${line}:callModel`]);
console.log('smoke: traceforge exports the helper and it attributed the call');
