// Shared by the Node end-to-end clients: modes, prompts, the get_weather tool
// and the framed transcript (the same as the Go clients print).

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
  } catch (err) {
    console.error(`${client}: error: ${err?.stack ?? err}`);
    process.exit(1);
  }
  process.stdout.write([`=== ${client} ${mode} ===`, ...lines, '=== end ==='].join('\n') + '\n');
}
