// End-to-end client for the `openai` npm SDK: node openai.mjs plain|stream|tool|default.
// default is the SDK's default call (model and messages only: no temperature,
// seed or max tokens), which records after traceforge init.
// The SDK reads OPENAI_BASE_URL and OPENAI_API_KEY; traceforgeFetch (package
// traceforge-source, helpers/node) attributes every call.
// Its stream mode does not ask for usage.
import OpenAI from 'openai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const client = new OpenAI({ fetch: traceforgeFetch() });

function params(messages) {
  return { model: s.OPENAI_MODEL, messages, temperature: 0, seed: s.SEED, max_tokens: s.MAX_TOKENS };
}

async function plain(lines) {
  const resp = await client.chat.completions.create(params([{ role: 'user', content: s.prompt('plain') }]));
  lines.push(`content: ${s.quote(resp.choices[0].message.content ?? '')}`);
  lines.push(`finish_reason: ${resp.choices[0].finish_reason}`);
  lines.push(`tokens: ${resp.usage?.total_tokens}`);
}

async function stream(lines) {
  const st = await client.chat.completions.create({ ...params([{ role: 'user', content: s.prompt('stream') }]), stream: true });
  let content = '';
  let finish = '';
  let usage = 'none';
  for await (const chunk of st) {
    // Not asked for: the proxy and the replay must not deliver it.
    if (chunk.usage) usage = 'delivered without being asked for';
    for (const c of chunk.choices) {
      content += c.delta?.content ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  lines.push(`content: ${s.quote(content)}`);
  lines.push(`finish_reason: ${finish}`);
  lines.push(`usage: ${usage}`);
}

// agent: the model asks for get_weather, we run it and send the result back.
async function agent(lines) {
  const messages = [{ role: 'user', content: s.prompt('tool') }];
  const tools = [{ type: 'function', function: { name: s.TOOL_NAME, description: s.TOOL_DESCRIPTION, parameters: s.TOOL_SCHEMA } }];
  for (let turn = 1; turn <= 3; turn++) {
    const resp = await client.chat.completions.create({ ...params(messages), tools });
    const msg = resp.choices[0].message;
    lines.push(`turn ${turn}: finish_reason: ${resp.choices[0].finish_reason}`);
    lines.push(`turn ${turn}: tokens: ${resp.usage?.total_tokens}`);
    if (!msg.tool_calls?.length) {
      lines.push(`turn ${turn}: content: ${s.quote(msg.content ?? '')}`);
      return;
    }
    messages.push(msg);
    for (const tc of msg.tool_calls) {
      lines.push(`turn ${turn}: tool_call: ${tc.function.name} ${tc.function.arguments}`);
      messages.push({ role: 'tool', tool_call_id: tc.id, content: s.runTool(tc.function.name, tc.function.arguments) });
    }
  }
  lines.push('no final answer after 3 turns');
}

// defaultCall: the call as the SDK's README writes it, no sampling settings.
async function defaultCall(lines) {
  const resp = await client.chat.completions.create({ model: s.OPENAI_MODEL, messages: [{ role: 'user', content: s.prompt('default') }] });
  lines.push(`content: ${s.quote(resp.choices[0].message.content ?? '')}`);
  lines.push(`finish_reason: ${resp.choices[0].finish_reason}`);
  lines.push(`tokens: ${resp.usage?.total_tokens}`);
}

await s.main('openai-node', async (mode, lines) => {
  const run = { plain, stream, tool: agent, default: defaultCall }[mode];
  await run(lines);
}, [...s.MODES, 'default']);
