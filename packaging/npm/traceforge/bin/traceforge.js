#!/usr/bin/env node
// The traceforge command of the npm package: runs the static binary that the
// optional dependency @traceforge/cli-<platform>-<arch> of this machine
// installed (npm installs only the one whose "os" and "cpu" match). There is
// no install script: nothing is downloaded, the binary comes from the
// registry (or the tarball) like any package file.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const SUPPORTED = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64'];
const target = `${process.platform}-${process.arch}`;
const pkg = `@traceforge/cli-${target}`;

function fail(message) {
  process.stderr.write(`traceforge: ${message}\n`);
  process.exit(2);
}

let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'traceforge');
} catch {
  if (!SUPPORTED.includes(target)) {
    fail(`no traceforge binary is published for ${target} (there are: ${SUPPORTED.join(', ')}); ` +
      'build it from source: go install github.com/traceforge/traceforge/cmd/traceforge@latest');
  }
  fail(`the optional dependency ${pkg} is not installed, so there is no binary to run. ` +
    'It is skipped by --omit=optional (or --no-optional), and by a lockfile written on another ' +
    'platform by an npm that dropped it; reinstall without those (npm install), or add it: ' +
    `npm install ${pkg}`);
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
// A signal sent to this launcher goes to traceforge too (it handles SIGINT and
// SIGTERM by cleaning up, and a second one is harmless): the launcher waits.
const forward = (signal) => child.kill(signal);
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const s of signals) process.on(s, forward);
child.on('error', (err) => fail(`cannot run ${binary}: ${err.message}`));
child.on('exit', (code, signal) => {
  for (const s of signals) process.off(s, forward);
  if (signal) {
    process.kill(process.pid, signal); // die the same way, so the caller sees it
    return;
  }
  process.exit(code ?? 1);
});
