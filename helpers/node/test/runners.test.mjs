// The package as users get it: packed with npm pack, installed from the
// tarball (and from its folder) into a temporary project, then used from
// plain Node and from node:test with the runner setup.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { echoServer, markerLine, writeFakeLib } from './helpers.mjs';

const run = promisify(execFile);
const pkgDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const fixture = path.join(pkgDir, 'fixtures', 'node-test', 'app.test.mjs');

let echo;
let tmp;
let tarball;

async function npm(cwd, ...args) {
  return run('npm', [...args, '--no-audit', '--no-fund', '--offline', '--loglevel=error'], { cwd });
}

/** A project folder with package.json and traceforge-source installed from spec. */
async function project(name, spec) {
  const dir = path.join(tmp, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  await npm(dir, 'install', spec);
  return dir;
}

before(async () => {
  echo = await echoServer();
  tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'tf-source-pack-')));
  const { stdout } = await run('npm', ['pack', '--pack-destination', tmp, '--loglevel=error'], { cwd: pkgDir });
  tarball = path.join(tmp, stdout.trim().split('\n').pop());
});
after(async () => {
  await echo.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('npm pack ships the sources and types, not the tests', async () => {
  const dir = await project('packed', tarball);
  const installed = path.join(dir, 'node_modules', 'traceforge-source');
  assert.ok(!lstatSync(installed).isSymbolicLink(), 'a tarball install copies the package');
  const files = readdirSync(path.join(installed, 'src')).sort();
  assert.deepEqual(files, ['core.cjs', 'index.d.ts', 'index.js', 'jest.cjs', 'jest.js', 'node-test.js', 'runner.d.ts', 'vitest.js']);
  assert.ok(!existsSync(path.join(installed, 'test')), 'tests are not packed');
});

for (const [name, spec] of [
  ['tarball', () => tarball],
  ['folder', () => pkgDir],
]) {
  test(`installed from its ${name}, traceforgeFetch attributes a call to the app`, async () => {
    const dir = await project(`app-${name}`, spec());
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(
      path.join(dir, 'src', 'main.mjs'),
      [
        "import { traceforgeFetch } from 'traceforge-source';",
        'const f = traceforgeFetch();',
        'async function main() {',
        `  const r = await f(process.env.ECHO_URL + '${name}');`,
        '  console.log(await r.text());',
        '}',
        'await main();',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['src/main.mjs'], { cwd: dir, env: { ...process.env, ECHO_URL: echo.url } });
    assert.equal(stdout.trim(), 'src/main.mjs:4:main');
  });
}

// Runs app.test.mjs with node --test; TRACEFORGE_URL is set as traceforge
// sets it for the command it runs.
async function nodeTest(dir, imports) {
  const args = [...imports.flatMap((m) => ['--import', m]), '--test', 'app.test.mjs'];
  // A node:test run of its own, not a child reporting to this one.
  const env = { ...process.env, ECHO_URL: echo.url, TRACEFORGE_URL: echo.url };
  delete env.NODE_TEST_CONTEXT;
  try {
    return await run(process.execPath, args, { cwd: dir, env });
  } catch (err) {
    assert.fail(`node ${args.join(' ')} failed:\n${err.stdout}\n${err.stderr}`);
  }
}

test('node:test setup attributes a call with no application frame to the running test', async () => {
  const dir = await project('nodetest', tarball);
  writeFakeLib(dir);
  cpSync(fixture, path.join(dir, 'app.test.mjs'));
  echo.seen.clear();
  await nodeTest(dir, ['fakelib', 'traceforge-source/node-test']);
  assert.equal(echo.seen.get('/lost'), `app.test.mjs:${markerLine(fixture, 'lost-test')}:billing%20>%20sends%20the%20invoice%20summary`);
  assert.equal(echo.seen.get('/queued'), `app.test.mjs:${markerLine(fixture, 'queued')}:TestContext.<anonymous>`);

  // Without the setup the detached call finds nothing; causality alone still
  // attributes the queued one.
  echo.seen.clear();
  await nodeTest(dir, ['fakelib']);
  assert.equal(echo.seen.get('/lost'), null);
  assert.equal(echo.seen.get('/queued'), `app.test.mjs:${markerLine(fixture, 'queued')}:TestContext.<anonymous>`);
});

// Vitest and Jest run in fixtures/runners, whose devDependencies (the runners,
// TypeScript, and this package by folder) `npm install` installs there.
const runners = path.join(pkgDir, 'fixtures', 'runners');

async function runRunner(bin, args, extraEnv = {}) {
  const binPath = path.join(runners, 'node_modules', ...bin.split('/'));
  assert.ok(existsSync(binPath), `${binPath} is missing: run npm install in ${runners}`);
  writeFakeLib(runners);
  const env = { ...process.env, ECHO_URL: echo.url, TRACEFORGE_URL: echo.url, ...extraEnv };
  delete env.NODE_TEST_CONTEXT;
  try {
    return await run(process.execPath, [binPath, ...args], { cwd: runners, env });
  } catch (err) {
    assert.fail(`${bin} ${args.join(' ')} failed:\n${err.stdout}\n${err.stderr}`);
  }
}

for (const [what, extraEnv] of [
  ['with task locations', {}],
  ['without task locations (line through causality)', { TF_NO_LOCATION: '1' }],
]) {
  test(`vitest setup attributes a call with no application frame to the running test, ${what}`, async () => {
    const file = path.join(runners, 'billing.vitest.js');
    echo.seen.clear();
    await runRunner('vitest/vitest.mjs', ['run'], extraEnv);
    assert.equal(echo.seen.get('/vitest-lost'), `billing.vitest.js:${markerLine(file, 'vitest-lost')}:billing%20>%20sends%20the%20invoice%20summary`);
    assert.equal(echo.seen.get('/vitest-queued'), `billing.vitest.js:${markerLine(file, 'vitest-queued')}:<anonymous>`);
  });
}

test('jest setup attributes a call with no application frame to the running test', async () => {
  const file = path.join(runners, 'billing.jest.cjs');
  echo.seen.clear();
  await runRunner('jest/bin/jest.js', ['--ci']);
  // Jest does not expose the line: the first frame in the test file found
  // through causality, the async test function's own line.
  assert.equal(echo.seen.get('/jest-lost'), `billing.jest.cjs:${markerLine(file, 'jest-lost-test')}:billing%20sends%20the%20invoice%20summary`);
  assert.equal(echo.seen.get('/jest-queued'), `billing.jest.cjs:${markerLine(file, 'jest-queued')}:Object.<anonymous>`);
});

test('the TypeScript types resolve for every entry point and reject misuse', async () => {
  const tsc = path.join(runners, 'node_modules', 'typescript', 'bin', 'tsc');
  assert.ok(existsSync(tsc), `${tsc} is missing: run npm install in ${runners}`);
  try {
    await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: runners });
  } catch (err) {
    assert.fail(`tsc -p fixtures/runners/tsconfig.json failed:\n${err.stdout}\n${err.stderr}`);
  }
});
