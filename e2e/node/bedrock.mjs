// End-to-end client for @aws-sdk/client-bedrock-runtime:
// node bedrock.mjs plain|stream|tool|invoke|invoke-stream (Converse,
// ConverseStream read to its end, a Converse toolUse → toolResult round trip,
// InvokeModel and InvokeModelWithResponseStream with Anthropic's Messages
// body). The client is the SDK's default one: it reads
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME (set by traceforge), its credentials and
// region from the environment, signs every request with SigV4 and talks
// HTTP/2 with prior knowledge (h2c) to the http:// endpoint.
//
// The SDK sends through node:http2, not fetch, so neither traceforgeFetch()
// nor the fetch tap of common.mjs sees its requests. Two middlewares of this
// client's stack stand in for them:
// - attribution: the initialize step, which runs synchronously inside
//   client.send(…) with the application's line on the stack, takes the
//   first application frame below itself (sourceFromStack of package
//   traceforge-source); the deserialize step, after
//   signing and just before the request handler, sets X-Traceforge-Source
//   from it (formatSource), as traceforgeFetch() would below the SDK;
// - the stream tap (TF_E2E_WIRE): in the same place, each response whose
//   Content-Type is a stream type gets its body teed, and the bytes the SDK
//   read are appended to the file once the body ends, as common.mjs does.
import { appendFileSync } from 'node:fs';
import { Transform } from 'node:stream';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { HEADER, formatSource, sourceFromStack } from 'traceforge-source';
import * as s from './common.mjs';

const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const SOURCE = Symbol('traceforge source');
const STREAM_TYPES = ['text/event-stream', 'application/x-ndjson', 'application/vnd.amazon.eventstream'];

const client = new BedrockRuntimeClient({});

// callerSource is the source of the first application frame below the
// function below: currentSource() would name the middleware itself, an
// application frame of this file ("skip" leaves out whole files).
function callerSource(below) {
  const holder = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
  try {
    Error.captureStackTrace(holder, below);
  } finally {
    Error.stackTraceLimit = limit;
  }
  return sourceFromStack(holder.stack);
}

client.middlewareStack.add(
  (next, context) => {
    const capture = (args) => {
      context[SOURCE] = callerSource(capture);
      return next(args);
    };
    return capture;
  },
  { step: 'initialize', priority: 'high', name: 'traceforgeSourceCapture' },
);

client.middlewareStack.add(
  (next, context) => async (args) => {
    const src = context[SOURCE];
    if (src && args.request?.headers && !Object.keys(args.request.headers).some((k) => k.toLowerCase() === HEADER.toLowerCase())) {
      args.request.headers[HEADER] = formatSource(src);
    }
    return next(args);
  },
  { step: 'deserialize', priority: 'low', name: 'traceforgeSourceHeader' },
);

if (process.env.TF_E2E_WIRE) {
  const file = process.env.TF_E2E_WIRE;
  client.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const res = out.response;
      const key = Object.keys(res?.headers ?? {}).find((k) => k.toLowerCase() === 'content-type');
      const type = (key ? String(res.headers[key]) : '').split(';')[0].trim().toLowerCase();
      if (!res?.body || typeof res.body.pipe !== 'function' || !STREAM_TYPES.includes(type)) return out;
      const chunks = [];
      let written = false;
      const write = () => {
        if (written) return;
        written = true;
        appendFileSync(file, JSON.stringify({ content_type: type, b64: Buffer.concat(chunks).toString('base64') }) + '\n');
      };
      const tee = new Transform({
        transform(chunk, _enc, cb) {
          chunks.push(Buffer.from(chunk));
          cb(null, chunk);
        },
        flush(cb) {
          write();
          cb();
        },
      });
      // A body cut short keeps what arrived; the suite compares it.
      tee.on('close', write);
      res.body.on('error', (err) => tee.destroy(err));
      res.body.pipe(tee);
      res.body = tee;
      return out;
    },
    { step: 'deserialize', priority: 'low', name: 'traceforgeWireTap' },
  );
}

function inference() {
  return { temperature: 0, maxTokens: s.MAX_TOKENS };
}

function describe(lines, prefix, resp) {
  const calls = [];
  let text = '';
  for (const b of resp.output?.message?.content ?? []) {
    if (b.text !== undefined) text += b.text;
    if (b.toolUse) {
      lines.push(`${prefix}tool_use: ${b.toolUse.name} ${s.canonical(b.toolUse.input)}`);
      calls.push(b.toolUse);
    }
  }
  lines.push(`${prefix}text: ${s.quote(text)}`);
  lines.push(`${prefix}stop_reason: ${resp.stopReason}`);
  lines.push(`${prefix}tokens: ${resp.usage?.totalTokens}`);
  return calls;
}

async function plain(lines) {
  const resp = await client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: s.prompt('plain') }] }], inferenceConfig: inference() }));
  describe(lines, '', resp);
}

async function stream(lines) {
  const resp = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: s.prompt('stream') }] }], inferenceConfig: inference() }));
  let text = '';
  const kinds = [];
  for await (const ev of resp.stream) {
    const kind = Object.keys(ev).find((k) => ev[k] !== undefined);
    kinds.push(kind);
    if (ev.contentBlockDelta?.delta?.text !== undefined) text += ev.contentBlockDelta.delta.text;
    if (ev.messageStop) lines.push(`stop_reason: ${ev.messageStop.stopReason}`);
    if (ev.metadata) lines.push(`tokens: ${ev.metadata.usage?.totalTokens}`);
  }
  lines.push(`events: ${kinds.join(' ')}`);
  lines.push(`streamed text: ${s.quote(text)}`);
}

// agent: the model asks for get_weather, we run it and send the result back
// as a toolResult block.
async function agent(lines) {
  const toolConfig = { tools: [{ toolSpec: { name: s.TOOL_NAME, description: s.TOOL_DESCRIPTION, inputSchema: { json: s.TOOL_SCHEMA } } }] };
  const messages = [{ role: 'user', content: [{ text: s.prompt('tool') }] }];
  for (let turn = 1; turn <= 3; turn++) {
    const resp = await client.send(new ConverseCommand({ modelId: MODEL, messages, inferenceConfig: inference(), toolConfig }));
    const calls = describe(lines, `turn ${turn}: `, resp);
    if (!calls.length) return;
    messages.push(resp.output.message);
    messages.push({
      role: 'user',
      content: calls.map((c) => ({ toolResult: { toolUseId: c.toolUseId, content: [{ json: JSON.parse(s.runTool(c.name, c.input)) }] } })),
    });
  }
  lines.push('no final answer after 3 turns');
}

// anthropicBody is InvokeModel's body for an Anthropic model: Anthropic's
// Messages body with anthropic_version and without model (the path has it).
function anthropicBody(prompt) {
  return JSON.stringify({
    anthropic_version: 'bedrock-2023-05-31',
    max_tokens: s.MAX_TOKENS,
    temperature: 0,
    messages: [{ role: 'user', content: prompt }],
  });
}

async function invokeModel(lines) {
  const resp = await client.send(new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', accept: 'application/json', body: anthropicBody(s.prompt('plain')) }));
  const msg = JSON.parse(new TextDecoder().decode(resp.body));
  lines.push(`content_type: ${resp.contentType}`);
  lines.push(`text: ${s.quote((msg.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join(''))}`);
  lines.push(`stop_reason: ${msg.stop_reason}`);
  lines.push(`tokens: ${(msg.usage?.input_tokens ?? 0) + (msg.usage?.output_tokens ?? 0)}`);
}

// invokeStream reads every chunk (one Anthropic stream event each) and
// assembles the text from the deltas.
async function invokeStream(lines) {
  const resp = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, contentType: 'application/json', accept: 'application/json', body: anthropicBody(s.prompt('stream')) }));
  let text = '';
  let tokens = 0;
  const kinds = [];
  for await (const ev of resp.body) {
    if (!ev.chunk) throw new Error(`unexpected stream member ${Object.keys(ev).join(',')}`);
    const e = JSON.parse(new TextDecoder().decode(ev.chunk.bytes));
    kinds.push(e.type);
    if (e.type === 'message_start') tokens += e.message?.usage?.input_tokens ?? 0;
    if (e.type === 'content_block_delta' && e.delta?.type === 'text_delta') text += e.delta.text;
    if (e.type === 'message_delta') {
      lines.push(`stop_reason: ${e.delta?.stop_reason}`);
      tokens += e.usage?.output_tokens ?? 0;
    }
  }
  lines.push(`chunks: ${kinds.length} (${kinds.join(' ')})`);
  lines.push(`tokens: ${tokens}`);
  lines.push(`streamed text: ${s.quote(text)}`);
}

await s.main('bedrock-node', async (mode, lines) => {
  const run = { plain, stream, tool: agent, invoke: invokeModel, 'invoke-stream': invokeStream }[mode];
  try {
    await run(lines);
  } finally {
    client.destroy();
  }
}, ['plain', 'stream', 'tool', 'invoke', 'invoke-stream']);
