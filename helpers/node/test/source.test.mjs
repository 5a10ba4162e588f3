// Unit tests of traceforge-source, in process: node --test test/
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import {
  HEADER,
  currentSource,
  disableCausality,
  enableCausality,
  encodeField,
  formatSource,
  sourceFromStack,
  traceforgeFetch,
  withSource,
} from 'traceforge-source';
import { echoServer, markerLine, writeFakeLib } from './helpers.mjs';

const here = fileURLToPath(import.meta.url);
const root = path.dirname(path.dirname(here)); // the package folder
const FILE = 'test/source.test.mjs';
const line = (name) => markerLine(here, name);

let echo;
let lib;
let tmp;
before(async () => {
  echo = await echoServer();
  tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'tf-source-test-')));
  lib = await import(pathToFileURL(writeFakeLib(tmp)).href);
});
after(async () => {
  await echo.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('encodeField encodes %, :, space, controls and non-ASCII as UTF-8', () => {
  assert.equal(encodeField('src/app.py'), 'src/app.py');
  assert.equal(encodeField('a:b%c d'), 'a%3Ab%25c%20d');
  assert.equal(encodeField('café\n\x7f'), 'caf%C3%A9%0A%7F');
  assert.equal(encodeField('<anonymous>'), '<anonymous>');
  assert.equal(formatSource({ file: 'x y/ü.mjs', line: 7, function: 'ns::f' }), 'x%20y/%C3%BC.mjs:7:ns%3A%3Af');
  assert.equal(formatSource({ file: 'my app/café.js', line: 3, function: '<anonymous>' }), 'my%20app/caf%C3%A9.js:3:<anonymous>');
});

test('sourceFromStack skips node_modules, node: internals and the package', () => {
  const pkg = path.join(root, 'src', 'core.cjs');
  const stack = [
    'Error',
    `    at fetchWithSource (${pkg}:100:10)`,
    '    at OpenAI.fetchWithTimeout (file:///p/node_modules/openai/client.mjs:549:37)',
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    '    at async Agent.run [as go] (/proj/src/agent.mjs:12:3)',
    '    at file:///proj/main.mjs:3:1',
  ].join('\n');
  assert.deepEqual(sourceFromStack(stack, { root: '/proj' }), { file: 'src/agent.mjs', line: 12, function: 'Agent.run' });
  // Only the package's own src folder is skipped, not a project's src.
  assert.deepEqual(sourceFromStack(stack.replace('/proj/src/', `${root}/test/`), { root }), {
    file: 'test/agent.mjs',
    line: 12,
    function: 'Agent.run',
  });
});

test('sourceFromStack names anonymous frames and constructors, and honours skip', () => {
  const stack = ['Error', `    at ${root}/lib/wrap.mjs:5:1`, `    at new Client (${root}/main.mjs:3:1)`].join('\n');
  assert.deepEqual(sourceFromStack(stack, { root }), { file: 'lib/wrap.mjs', line: 5, function: '<anonymous>' });
  assert.deepEqual(sourceFromStack(stack, { root, skip: ['/lib/'] }), { file: 'main.mjs', line: 3, function: 'Client' });
});

test('sourceFromStack sends nothing for a frame outside the root or no frame', () => {
  const stack = ['Error', '    at main (/elsewhere/app.mjs:1:1)', `    at f (${root}/x.mjs:2:2)`].join('\n');
  assert.equal(sourceFromStack(stack, { root }), null);
  assert.equal(sourceFromStack('Error\n    at eval (eval at <anonymous>)', { root }), null);
  assert.equal(sourceFromStack(['Error', `    at f (${root}/x.mjs:0:2)`].join('\n'), { root }), null);
});

test('traceforgeFetch sets the header from its caller', async () => {
  const f = traceforgeFetch({ root });
  const resp = await f(echo.url + 'direct', { method: 'POST', body: '{}' }); // mark:direct
  // V8 names the test callback after the TestContext it is called on.
  assert.equal(await resp.text(), `${FILE}:${line('direct')}:TestContext.<anonymous>`);
});

test('traceforgeFetch reads the headers of a Request and keeps a header already set', async () => {
  const f = traceforgeFetch({ root });
  const req = new Request(echo.url + 'request', { headers: { [HEADER]: 'src/app.py:12:summarize' } });
  assert.equal(await (await f(req)).text(), 'src/app.py:12:summarize');
  const resp = await f(echo.url + 'kept', { headers: { 'x-traceforge-source': 'a.js:1:f' } });
  assert.equal(await resp.text(), 'a.js:1:f');
});

test('traceforgeFetch sends no header when the caller lies outside the root', async () => {
  const f = traceforgeFetch({ root: path.join(root, 'src') });
  assert.equal(await (await f(echo.url + 'outside')).text(), '<none>');
});

test('causality attributes a call a library queues to the line that started it', async () => {
  const f = traceforgeFetch({ root, causality: true });
  async function summarize() {
    return lib.queued(f, echo.url + 'queued'); // mark:queued
  }
  assert.equal(await summarize(), `${FILE}:${line('queued')}:summarize`);
});

test('without causality a queued call has no application frame', async () => {
  disableCausality();
  try {
    const f = traceforgeFetch({ root, causality: false });
    assert.equal(await lib.queued(f, echo.url + 'nocause'), '<none>');
  } finally {
    enableCausality();
  }
});

// A script in a project of its own, run with and without TRACEFORGE_URL.
async function runQueuedScript(extraEnv) {
  const app = path.join(tmp, 'app');
  mkdirSync(app, { recursive: true });
  writeFakeLib(app);
  const script = [
    `import { traceforgeFetch } from ${JSON.stringify(pathToFileURL(path.join(root, 'src', 'index.js')).href)};`,
    "import { queued } from 'fakelib';",
    'async function main() {',
    '  console.log(await queued(traceforgeFetch(), process.env.ECHO_URL));',
    '}',
    'await main();',
  ].join('\n');
  writeFileSync(path.join(app, 'main.mjs'), script);
  const env = { ...process.env, ECHO_URL: echo.url + 'script' };
  delete env.TRACEFORGE_URL;
  Object.assign(env, extraEnv);
  const { stdout } = await promisify(execFile)(process.execPath, ['main.mjs'], { cwd: app, env });
  return stdout.trim();
}

test('causality is on by default only while traceforge runs the app (TRACEFORGE_URL)', async () => {
  assert.equal(await runQueuedScript({ TRACEFORGE_URL: 'http://127.0.0.1:1' }), 'main.mjs:4:main');
  assert.equal(await runQueuedScript({}), '<none>');
});

test('withSource(fn) attributes calls in its scope to the line that called it', async () => {
  const f = traceforgeFetch({ root });
  const got = await withSource(() => lib.queued(f, echo.url + 'scope')); // mark:scope
  assert.equal(got, `${FILE}:${line('scope')}:TestContext.<anonymous>`);
});

test('withSource with an explicit source wins over causality, not over the stack', async () => {
  const f = traceforgeFetch({ root });
  const src = { file: 'src/jobs/nightly.js', line: 40, function: 'nightly report' };
  assert.equal(await withSource(src, () => lib.queued(f, echo.url + 'explicit')), 'src/jobs/nightly.js:40:nightly%20report');
  const direct = await withSource(src, async () => (await f(echo.url + 'explicit-direct')).text()); // mark:explicit
  assert.equal(direct, `${FILE}:${line('explicit')}:<anonymous>`);
  assert.equal(await withSource({ file: 'a.js', line: 2 }, () => lib.queued(f, echo.url + 'default-fn')), 'a.js:2:<anonymous>');
});

test('withSource rejects a malformed source, naming the fields', () => {
  assert.throws(() => withSource({ file: '', line: 1 }, () => 1), /must be \{file: "relative\/path.js", line: N >= 1/);
  assert.throws(() => withSource({ file: 'a.js', line: 0 }, () => 1), /line: N >= 1/);
  assert.throws(() => withSource({ file: 'a.js', line: 1 }), /fn must be a function/);
});

test('currentSource outside any test, scope or application frame is null', async () => {
  // The detached loop was started when the library was imported inside
  // before(): its context reaches no test body and no application frame
  // within the root.
  const f = traceforgeFetch({ root: path.join(tmp, 'app') });
  assert.equal(await lib.detached(f, echo.url + 'detached'), '<none>');
});
