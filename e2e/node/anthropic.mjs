// End-to-end client for the `@anthropic-ai/sdk` npm SDK:
// node anthropic.mjs plain|stream|tool|default. default is the SDK's default
// streamed call as its README writes it (model, max_tokens — the API requires
// it — and messages; no temperature), recorded after `traceforge init`. The
// SDK reads ANTHROPIC_BASE_URL
// (without /v1) and ANTHROPIC_API_KEY. The SDK's middleware chain drops the
// caller's async stack frames; traceforgeFetch finds the caller through async
// causality instead.
import Anthropic from '@anthropic-ai/sdk';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const client = new Anthropic({ fetch: traceforgeFetch() });

function params(messages) {
  return { model: s.ANTHROPIC_MODEL, messages, temperature: 0, max_tokens: s.MAX_TOKENS };
}

function describe(lines, prefix, msg) {
  let text = '';
  for (const b of msg.content) {
    if (b.type === 'text') text += b.text;
    if (b.type === 'tool_use') lines.push(`${prefix}tool_call: ${b.name} ${s.canonical(b.input)}`);
  }
  lines.push(`${prefix}content: ${s.quote(text)}`);
  lines.push(`${prefix}stop_reason: ${msg.stop_reason}`);
  const u = msg.usage;
  lines.push(`${prefix}tokens: ${u.input_tokens + u.output_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0)}`);
}

async function plain(lines) {
  const msg = await client.messages.create(params([{ role: 'user', content: s.prompt('plain') }]));
  describe(lines, '', msg);
}

async function stream(lines) {
  const st = client.messages.stream(params([{ role: 'user', content: s.prompt('stream') }]));
  describe(lines, '', await st.finalMessage());
}

// agent: the model asks for get_weather, we run it and send the result back.
async function agent(lines) {
  const messages = [{ role: 'user', content: s.prompt('tool') }];
  const tools = [{ name: s.TOOL_NAME, description: s.TOOL_DESCRIPTION, input_schema: s.TOOL_SCHEMA }];
  for (let turn = 1; turn <= 3; turn++) {
    const msg = await client.messages.create({ ...params(messages), tools });
    describe(lines, `turn ${turn}: `, msg);
    const uses = msg.content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0) return;
    messages.push({ role: 'assistant', content: msg.content });
    messages.push({
      role: 'user',
      content: uses.map((b) => ({ type: 'tool_result', tool_use_id: b.id, content: s.runTool(b.name, b.input) })),
    });
  }
  lines.push('no final answer after 3 turns');
}

// defaultCall: the README's streaming call, no sampling settings.
async function defaultCall(lines) {
  const st = client.messages.stream({ model: s.ANTHROPIC_MODEL, max_tokens: 1024, messages: [{ role: 'user', content: s.prompt('default') }] });
  describe(lines, '', await st.finalMessage());
}

await s.main('anthropic-node', async (mode, lines) => {
  const run = { plain, stream, tool: agent, default: defaultCall }[mode];
  await run(lines);
}, [...s.MODES, 'default']);
