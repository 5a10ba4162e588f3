// End-to-end client for Ollama through the `ollama` npm package:
// node ollama.mjs chat|stream|generate|tool|embed. The package ignores
// OLLAMA_HOST (traceforge sets it to itself): the host is passed explicitly.
import { Ollama } from 'ollama';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const MODES = ['chat', 'stream', 'generate', 'tool', 'embed', 'default'];
if (!process.env.OLLAMA_HOST) throw new Error('OLLAMA_HOST is not set: run this client under traceforge record or verify');
const ollama = new Ollama({ host: process.env.OLLAMA_HOST, fetch: traceforgeFetch() });
const options = { temperature: 0, seed: s.SEED, num_predict: s.MAX_TOKENS };

function describe(lines, prefix, content, final, calls = []) {
  for (const c of calls) lines.push(`${prefix}tool_call: ${c.function.name} ${s.canonical(c.function.arguments)}`);
  lines.push(`${prefix}content: ${s.quote(content)}`);
  lines.push(`${prefix}done_reason: ${final.done_reason}`);
  lines.push(`${prefix}tokens: ${final.prompt_eval_count + final.eval_count}`);
}

async function chat(lines) {
  const r = await ollama.chat({ model: s.OLLAMA_MODEL, messages: [{ role: 'user', content: s.prompt('plain') }], options, stream: false });
  describe(lines, '', r.message.content, r);
}

async function stream(lines) {
  const st = await ollama.chat({ model: s.OLLAMA_MODEL, messages: [{ role: 'user', content: s.prompt('stream') }], options, stream: true });
  let content = '';
  let final;
  for await (const part of st) {
    content += part.message.content;
    if (part.done) final = part;
  }
  if (!final) throw new Error('the stream ended without done');
  describe(lines, '', content, final);
}

// defaultCall: the README's call, no options at all (it streams unless
// told otherwise: here the README's stream: true form).
async function defaultCall(lines) {
  const st = await ollama.chat({ model: s.OLLAMA_MODEL, messages: [{ role: 'user', content: s.prompt('default') }], stream: true });
  let content = '';
  let final;
  for await (const part of st) {
    content += part.message.content;
    if (part.done) final = part;
  }
  if (!final) throw new Error('the stream ended without done');
  describe(lines, '', content, final);
}

async function generate(lines) {
  const st = await ollama.generate({ model: s.OLLAMA_MODEL, prompt: s.prompt('generate'), options, stream: true });
  let text = '';
  let final;
  for await (const part of st) {
    text += part.response;
    if (part.done) final = part;
  }
  if (!final) throw new Error('the stream ended without done');
  lines.push(`response: ${s.quote(text)}`);
  lines.push(`done_reason: ${final.done_reason}`);
  lines.push(`tokens: ${final.prompt_eval_count + final.eval_count}`);
}

// agent: the model calls get_weather, the client sends a tool message back.
async function agent(lines) {
  const messages = [{ role: 'user', content: s.prompt('tool') }];
  const tools = [{ type: 'function', function: { name: s.TOOL_NAME, description: s.TOOL_DESCRIPTION, parameters: s.TOOL_SCHEMA } }];
  for (let turn = 1; turn <= 3; turn++) {
    const r = await ollama.chat({ model: s.OLLAMA_MODEL, messages, tools, options, stream: false });
    const calls = r.message.tool_calls ?? [];
    describe(lines, `turn ${turn}: `, r.message.content, r, calls);
    if (calls.length === 0) return;
    messages.push(r.message);
    for (const c of calls) messages.push({ role: 'tool', tool_name: c.function.name, content: s.runTool(c.function.name, c.function.arguments) });
  }
  lines.push('no final answer after 3 turns');
}

async function embed(lines) {
  const r = await ollama.embed({ model: s.OLLAMA_EMBED_MODEL, input: [s.prompt('embed'), 'Grace Hopper'] });
  r.embeddings.forEach((e, i) => lines.push(`embedding ${i}: ${e.length} values, first ${e[0].toFixed(6)}`));
  lines.push(`prompt_eval_count: ${r.prompt_eval_count}`);
}

await s.main('ollama-node', async (mode, lines) => {
  const run = { chat, stream, generate, tool: agent, embed, default: defaultCall }[mode];
  await run(lines);
}, MODES);
