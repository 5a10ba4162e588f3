// Shared by the Node end-to-end clients: modes, prompts, the get_weather tool,
// the framed transcript (the same as the Go clients print) and the stream tap.
import { appendFileSync } from 'node:fs';

export const MODES = ['plain', 'stream', 'tool'];
export const OPENAI_MODEL = 'gpt-4o-mini';
export const ANTHROPIC_MODEL = 'claude-3-5-haiku-latest';
export const GEMINI_MODEL = 'gemini-2.5-flash';
export const GEMINI_EMBED_MODEL = 'gemini-embedding-001';
export const OLLAMA_MODEL = 'llama3.2';
export const OLLAMA_EMBED_MODEL = 'nomic-embed-text';
export const OPENAI_EMBED_MODEL = 'text-embedding-3-small';
export const MAX_TOKENS = 64;
export const SEED = 42;
export const TOOL_NAME = 'get_weather';
export const TOOL_DESCRIPTION = 'Get the current weather for a city.';
export const TOOL_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string', description: 'City name, e.g. Paris' } },
  required: ['city'],
};

const PROMPTS = {
  plain: 'Say hello to Ada Lovelace in one short sentence.',
  stream: 'Write one line about Grace Hopper and compilers.',
  tool: 'What is the weather in Paris today?',
  chain: 'Name one thing Alan Turing is known for.',
  rag: 'What does traceforge do with LLM calls?',
  generate: 'Why is the sky blue? One sentence.',
  embed: 'Ada Lovelace wrote the first program.',
  default: 'Name the first programmer in three words.',
};

/** The user prompt for mode, with TF_E2E_PROMPT_SUFFIX appended. */
export function prompt(mode) {
  if (!(mode in PROMPTS)) throw new Error(`no prompt for mode ${mode}`);
  return PROMPTS[mode] + (process.env.TF_E2E_PROMPT_SUFFIX ?? '');
}

/** Runs get_weather: a fixed answer derived from the arguments. */
export function runTool(name, args) {
  let city = '';
  try {
    city = (typeof args === 'string' ? JSON.parse(args) : args).city ?? '';
  } catch {
    // fall through
  }
  if (name !== TOOL_NAME || !city) return '{"error":"unknown tool or bad arguments"}';
  return JSON.stringify({ city, conditions: 'sunny', temperature_c: 21 });
}

/** Go's %q for the strings the transcripts print (ASCII and common escapes). */
export function quote(s) {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => c);
}

/** JSON with sorted keys, compact, so differently spelled equal values print the same. */
export function canonical(v) {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}

// The stream tap (e2e/internal/wiretap for the Go clients): when TF_E2E_WIRE
// names a file, every response to a fetch whose Content-Type is one of
// STREAM_TYPES appends {"content_type", "b64": the whole body} to it once the
// body has ended. globalThis.fetch is wrapped when this module loads, before
// any client runs (runner.test.mjs does not go through main()): every
// client's SDK sends through traceforgeFetch(), which takes globalThis.fetch
// at each call, after it has set the source header. The SDK reads the
// Response itself; the tap reads a clone (a tee of the same bytes).
const STREAM_TYPES = ['text/event-stream', 'application/x-ndjson', 'application/vnd.amazon.eventstream'];
const taps = new Set();
if (process.env.TF_E2E_WIRE) {
  const file = process.env.TF_E2E_WIRE;
  const base = globalThis.fetch;
  globalThis.fetch = async function tappedFetch(input, init) {
    const res = await base(input, init);
    const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (!res.body || !STREAM_TYPES.includes(type)) return res;
    const reader = res.clone().body.getReader();
    const tap = (async () => {
      const chunks = [];
      try {
        for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
      } catch {
        // A body cut short keeps what arrived; the suite compares it.
      }
      appendFileSync(file, JSON.stringify({ content_type: type, b64: Buffer.concat(chunks).toString('base64') }) + '\n');
    })();
    taps.add(tap);
    tap.finally(() => taps.delete(tap));
    return res;
  };
}

/**
 * Parses argv, runs fn(mode, lines) and prints the framed transcript. modes
 * are the modes the client accepts (default MODES).
 */
export async function main(client, fn, modes = MODES) {
  const mode = process.argv[2];
  if (process.argv.length !== 3 || !modes.includes(mode)) {
    console.error(`usage: ${client} ${modes.join('|')}`);
    process.exit(2);
  }
  const lines = [];
  try {
    await fn(mode, lines);
    await Promise.all(taps);
  } catch (err) {
    console.error(`${client}: error: ${err?.stack ?? err}`);
    process.exit(1);
  }
  process.stdout.write([`=== ${client} ${mode} ===`, ...lines, '=== end ==='].join('\n') + '\n');
}
