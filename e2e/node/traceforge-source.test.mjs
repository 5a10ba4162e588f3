// Unit tests for traceforge-source.mjs: node --test (run by the e2e suite).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { encodeField, formatSource, sourceFromStack, traceable, traceforgeFetch, HEADER } from './traceforge-source.mjs';

const here = fileURLToPath(import.meta.url);
const root = path.dirname(here);

// markerLine returns the line of this file that ends with "// mark:<name>".
function markerLine(name) {
  const lines = readFileSync(here, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.endsWith(`// mark:${name}`));
  assert.notEqual(i, -1, `no line marked ${name}`);
  return i + 1;
}

test('encodeField encodes %, :, space, controls and non-ASCII as UTF-8', () => {
  assert.equal(encodeField('src/app.py'), 'src/app.py');
  assert.equal(encodeField('a:b%c d'), 'a%3Ab%25c%20d');
  assert.equal(encodeField('café\n'), 'caf%C3%A9%0A');
  assert.equal(encodeField('Agent.run'), 'Agent.run');
  assert.equal(formatSource({ file: 'x y/ü.mjs', line: 7, function: 'ns::f' }), 'x%20y/%C3%BC.mjs:7:ns%3A%3Af');
});

test('sourceFromStack skips node_modules, node: internals and the helper', () => {
  const helper = path.join(root, 'traceforge-source.mjs');
  const stack = [
    'Error',
    `    at fetchWithSource (file://${helper}:100:10)`,
    '    at OpenAI.fetchWithTimeout (file:///p/node_modules/openai/client.mjs:549:37)',
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    `    at async Agent.run [as go] (${root}/src/agent.mjs:12:3)`,
    `    at file://${root}/main.mjs:3:1`,
  ].join('\n');
  assert.deepEqual(sourceFromStack(stack, { root }), { file: 'src/agent.mjs', line: 12, function: 'Agent.run' });
});

test('sourceFromStack names anonymous frames and honours skip', () => {
  const stack = ['Error', `    at ${root}/lib/wrap.mjs:5:1`, `    at file://${root}/main.mjs:3:1`].join('\n');
  assert.deepEqual(sourceFromStack(stack, { root }), { file: 'lib/wrap.mjs', line: 5, function: '<anonymous>' });
  assert.deepEqual(sourceFromStack(stack, { root, skip: ['/lib/'] }), { file: 'main.mjs', line: 3, function: '<anonymous>' });
});

test('sourceFromStack sends nothing for a frame outside the root', () => {
  const stack = ['Error', '    at main (/elsewhere/app.mjs:1:1)', `    at f (${root}/x.mjs:2:2)`].join('\n');
  assert.equal(sourceFromStack(stack, { root }), null);
  assert.equal(sourceFromStack('Error\n    at eval (eval at <anonymous>)', { root }), null);
});

async function withEchoServer(fn) {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(req.headers[HEADER.toLowerCase()] ?? '<none>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await fn(`http://127.0.0.1:${server.address().port}/`);
  } finally {
    server.close();
  }
}

test('traceforgeFetch sets the header from its caller', async () => {
  await withEchoServer(async (url) => {
    const f = traceforgeFetch({ root });
    const resp = await f(url, { method: 'POST', body: '{}' }); // mark:fetch
    assert.equal(await resp.text(), `traceforge-source.test.mjs:${markerLine('fetch')}:<anonymous>`);
  });
});

test('traceforgeFetch keeps a header the caller set', async () => {
  await withEchoServer(async (url) => {
    const resp = await traceforgeFetch({ root })(url, { headers: { [HEADER]: 'src/app.py:12:summarize' } });
    assert.equal(await resp.text(), 'src/app.py:12:summarize');
  });
});

test('traceable captures the caller across lost async frames', async () => {
  await withEchoServer(async (url) => {
    const f = traceforgeFetch({ root });
    // A client whose request runs after a timer: no caller frame survives.
    const client = {
      api: {
        async call() {
          await new Promise((resolve) => setTimeout(resolve, 1));
          return (await f(url)).text();
        },
      },
    };
    async function summarize() {
      return traceable(client).api.call(); // mark:traceable
    }
    assert.equal(await summarize(), `traceforge-source.test.mjs:${markerLine('traceable')}:summarize`);
  });
});
