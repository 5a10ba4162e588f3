// End-to-end client for the Gemini API through `@google/genai`: node genai.mjs plain|stream|tool|embed|default.
// default is the SDK's default call (model and contents only: no config),
// recorded after `traceforge init` wrote the request defaults.
// The SDK reads GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL (traceforge sets
// the latter to itself); traceforgeFetch goes in through httpOptions.fetch.
import { GoogleGenAI } from '@google/genai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const MODES = ['plain', 'stream', 'tool', 'embed', 'default'];
const ai = new GoogleGenAI({ httpOptions: { fetch: traceforgeFetch() } });

function config(extra = {}) {
  return { temperature: 0, seed: s.SEED, maxOutputTokens: s.MAX_TOKENS, ...extra };
}

// describe adds an answer's function calls, text, finish reason, token count and model.
function describe(lines, prefix, r) {
  for (const fc of r.functionCalls ?? []) lines.push(`${prefix}function_call: ${fc.name} ${s.canonical(fc.args)}`);
  lines.push(`${prefix}text: ${s.quote(r.text ?? '')}`);
  lines.push(`${prefix}finish_reason: ${r.candidates?.[0]?.finishReason}`);
  lines.push(`${prefix}tokens: ${r.usageMetadata?.totalTokenCount}`);
  lines.push(`${prefix}model: ${r.modelVersion}`);
}

async function plain(lines) {
  const r = await ai.models.generateContent({ model: s.GEMINI_MODEL, contents: s.prompt('plain'), config: config() });
  describe(lines, '', r);
}

async function stream(lines) {
  const st = await ai.models.generateContentStream({ model: s.GEMINI_MODEL, contents: s.prompt('stream'), config: config() });
  let text = '';
  let last;
  let chunks = 0;
  for await (const chunk of st) {
    text += chunk.text ?? '';
    last = chunk;
    chunks++;
  }
  if (!last) throw new Error('the stream delivered no chunk');
  lines.push(`chunks: ${chunks > 1 ? 'several' : 'one'}`);
  lines.push(`streamed text: ${s.quote(text)}`);
  lines.push(`finish_reason: ${last.candidates?.[0]?.finishReason}`);
  lines.push(`tokens: ${last.usageMetadata?.totalTokenCount}`);
}

// agent: the model calls get_weather, the client answers with a functionResponse part.
async function agent(lines) {
  const contents = [{ role: 'user', parts: [{ text: s.prompt('tool') }] }];
  const tools = [{ functionDeclarations: [{ name: s.TOOL_NAME, description: s.TOOL_DESCRIPTION, parametersJsonSchema: s.TOOL_SCHEMA }] }];
  for (let turn = 1; turn <= 3; turn++) {
    const r = await ai.models.generateContent({ model: s.GEMINI_MODEL, contents, config: config({ tools }) });
    describe(lines, `turn ${turn}: `, r);
    const calls = r.functionCalls ?? [];
    if (calls.length === 0) return;
    contents.push(r.candidates[0].content);
    contents.push({
      role: 'user',
      parts: calls.map((fc) => ({ functionResponse: { id: fc.id, name: fc.name, response: JSON.parse(s.runTool(fc.name, fc.args)) } })),
    });
  }
  lines.push('no final answer after 3 turns');
}

// defaultCall: the call as the SDK's README writes it, no generation config.
async function defaultCall(lines) {
  const r = await ai.models.generateContent({ model: s.GEMINI_MODEL, contents: s.prompt('default') });
  describe(lines, '', r);
}

async function embed(lines) {
  const r = await ai.models.embedContent({ model: s.GEMINI_EMBED_MODEL, contents: [s.prompt('embed'), 'Grace Hopper'] });
  r.embeddings.forEach((e, i) => lines.push(`embedding ${i}: ${e.values.length} values, first ${e.values[0].toFixed(6)}`));
}

await s.main('genai-node', async (mode, lines) => {
  const run = { plain, stream, tool: agent, embed, default: defaultCall }[mode];
  await run(lines);
}, MODES);
