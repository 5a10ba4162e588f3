// LangChain JS under node:test with the runner setup loaded:
// node --import ./node/setup-node-test.mjs node/runner.test.mjs plain|stream (from e2e/).
// The mode's test makes one call and prints the framed transcript.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatModel } from './langchain-model.mjs';
import * as s from './common.mjs';

const mode = process.argv[2];
assert.ok(['plain', 'stream'].includes(mode), `usage: runner.test.mjs plain|stream (got ${mode})`);

const model = chatModel();

function print(lines) {
  process.stdout.write([`=== nodetest-node ${mode} ===`, ...lines, '=== end ==='].join('\n') + '\n');
}

test('plain', { skip: mode !== 'plain' }, async function plain() {
  const msg = await model.invoke([['user', s.prompt('plain')]]);
  print([`content: ${s.quote(String(msg.content))}`]);
});

test('stream', { skip: mode !== 'stream' }, async function stream() {
  let content = '';
  for await (const chunk of await model.stream([['user', s.prompt('stream')]])) content += String(chunk.content ?? '');
  print([`content: ${s.quote(content)}`]);
});
