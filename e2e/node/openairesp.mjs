// End-to-end client for the OpenAI Responses API and embeddings through the
// `openai` npm SDK: node openairesp.mjs plain|stream|helper|tool|chain|rag|default|around.
// around makes the calls around the LLM call: it counts a prompt's tokens,
// uploads a file (multipart, a random boundary each time) and polls a
// background response until it is completed.
// The SDK reads OPENAI_BASE_URL and OPENAI_API_KEY; traceforgeFetch (package
// traceforge-source, helpers/node) attributes every call. Nothing printed
// depends on per-call ids (the test re-records against an upstream that mints
// new ones).
import OpenAI, { toFile } from 'openai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const MODES = ['plain', 'stream', 'helper', 'tool', 'chain', 'rag', 'default', 'around'];
const client = new OpenAI({ fetch: traceforgeFetch(), maxRetries: 0 });

function params(input) {
  return { model: s.OPENAI_MODEL, input, temperature: 0, max_output_tokens: s.MAX_TOKENS };
}

// outputText joins the output_text parts of a response's messages: the SDK
// adds r.output_text only to a response it parsed itself, not to the one in
// a response.completed event.
function outputText(r) {
  return r.output
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content)
    .filter((part) => part.type === 'output_text')
    .map((part) => part.text)
    .join('');
}

function report(lines, prefix, r) {
  lines.push(`${prefix}content: ${s.quote(outputText(r))}`);
  lines.push(`${prefix}status: ${r.status}`);
  lines.push(`${prefix}tokens: ${r.usage?.total_tokens}`);
}

async function plain(lines) {
  const resp = await client.responses.create(params(s.prompt('plain')));
  report(lines, '', resp);
}

// defaultCall: the README's streamed call, no temperature or token limit
// (traceforge init's request defaults fill them in).
async function defaultCall(lines) {
  const st = await client.responses.create({ model: s.OPENAI_MODEL, input: s.prompt('default'), stream: true });
  let final;
  for await (const ev of st) if (ev.type === 'response.completed') final = ev.response;
  if (!final) throw new Error('no response.completed event');
  report(lines, '', final);
}

// around: count tokens, upload a file, start a background response and
// poll it (at most 10 times) until it is completed.
async function around(lines) {
  const prompt = s.prompt('plain');
  const count = await client.responses.inputTokens.count({ model: s.OPENAI_MODEL, input: prompt });
  lines.push(`input_tokens: ${count.input_tokens}`);
  const file = await client.files.create({ file: await toFile(Buffer.from('traceforge records LLM calls'), 'notes.txt'), purpose: 'user_data' });
  lines.push(`file: ${file.filename} ${file.bytes} bytes ${file.status}`);
  let resp = await client.responses.create({ ...params(prompt), background: true });
  const statuses = [resp.status];
  for (let i = 0; i < 10 && resp.status !== 'completed'; i++) {
    resp = await client.responses.retrieve(resp.id);
    statuses.push(resp.status);
  }
  lines.push(`statuses: ${statuses.join(',')}`);
  report(lines, '', resp);
}

// stream reads the raw events (`stream: true`): text deltas as they come,
// the final response from response.completed, sequence numbers in order.
async function stream(lines) {
  const st = await client.responses.create({ ...params(s.prompt('stream')), stream: true });
  let deltas = '';
  let final;
  let seq = 0;
  for await (const ev of st) {
    if (ev.sequence_number !== seq++) throw new Error(`event ${seq - 1} has sequence_number ${ev.sequence_number}`);
    if (ev.type === 'response.output_text.delta') deltas += ev.delta;
    if (ev.type === 'response.completed') final = ev.response;
  }
  if (!final) throw new Error('no response.completed event');
  lines.push(`deltas: ${s.quote(deltas)}`);
  report(lines, '', final);
}

// helper streams through the SDK's ResponseStream helper.
async function helper(lines) {
  const st = client.responses.stream(params(s.prompt('stream')));
  let deltas = '';
  st.on('response.output_text.delta', (ev) => { deltas += ev.delta; });
  const final = await st.finalResponse();
  lines.push(`deltas: ${s.quote(deltas)}`);
  report(lines, '', final);
}

// agent runs a function-tool round trip: the model calls get_weather, the
// client sends the call and its function_call_output back as input items.
async function agent(lines) {
  const input = [{ role: 'user', content: s.prompt('tool') }];
  const tools = [{ type: 'function', name: s.TOOL_NAME, description: s.TOOL_DESCRIPTION, parameters: s.TOOL_SCHEMA, strict: false }];
  for (let turn = 1; turn <= 3; turn++) {
    const resp = await client.responses.create({ ...params(input), tools });
    const calls = resp.output.filter((item) => item.type === 'function_call');
    lines.push(`turn ${turn}: status: ${resp.status}, tokens: ${resp.usage?.total_tokens}`);
    if (calls.length === 0) {
      lines.push(`turn ${turn}: content: ${s.quote(outputText(resp))}`);
      return;
    }
    for (const c of calls) {
      lines.push(`turn ${turn}: function_call: ${c.name} ${c.arguments}`);
      input.push(c);
      input.push({ type: 'function_call_output', call_id: c.call_id, output: s.runTool(c.name, c.arguments) });
    }
  }
  lines.push('no final answer after 3 turns');
}

// chain continues a conversation with previous_response_id, streamed.
async function chain(lines) {
  const first = await client.responses.create(params(s.prompt('chain')));
  report(lines, 'first: ', first);
  const st = await client.responses.create({ ...params('Now say it in French.'), previous_response_id: first.id, stream: true });
  let final;
  for await (const ev of st) {
    if (ev.type === 'response.completed') final = ev.response;
  }
  if (!final) throw new Error('no response.completed event');
  lines.push(`second: previous is first: ${final.previous_response_id === first.id}`);
  report(lines, 'second: ', final);
}

// rag embeds the question (the SDK asks for base64 by default and decodes
// it to floats), then answers it with chat completions.
async function rag(lines) {
  const q = s.prompt('rag');
  const emb = await client.embeddings.create({ model: s.OPENAI_EMBED_MODEL, input: q });
  const vec = emb.data[0]?.embedding;
  if (emb.data.length !== 1 || !Array.isArray(vec) || vec.some((x) => typeof x !== 'number' || !Number.isFinite(x))) {
    throw new Error(`want one decoded float embedding, got ${JSON.stringify(emb.data).slice(0, 200)}`);
  }
  lines.push(`embedding: ${vec.length} values, first ${vec[0].toFixed(6)}, tokens: ${emb.usage.total_tokens}`);
  const resp = await client.chat.completions.create({
    model: s.OPENAI_MODEL,
    messages: [{ role: 'system', content: 'Context: traceforge snapshots LLM calls.' }, { role: 'user', content: q }],
    temperature: 0,
    seed: s.SEED,
    max_tokens: s.MAX_TOKENS,
  });
  lines.push(`answer: ${s.quote(resp.choices[0].message.content ?? '')}`);
  lines.push(`tokens: ${resp.usage?.total_tokens}`);
}

await s.main('openairesp-node', async (mode, lines) => {
  const run = { plain, stream, helper, tool: agent, chain, rag, default: defaultCall, around }[mode];
  await run(lines);
}, MODES);
