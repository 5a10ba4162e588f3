// End-to-end client for the Vercel AI SDK (`ai` + `@ai-sdk/openai`): node aisdk.mjs plain|stream.
// The provider reads OPENAI_BASE_URL and OPENAI_API_KEY.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const openai = createOpenAI({ fetch: traceforgeFetch() });
// Chat Completions API. The Responses API (the SDK's default) is
// `openai(s.OPENAI_MODEL)`: change this one line once the proxy serves it.
const model = openai.chat(s.OPENAI_MODEL);

function params(mode) {
  return { model, prompt: s.prompt(mode), temperature: 0, seed: s.SEED, maxOutputTokens: s.MAX_TOKENS, maxRetries: 0 };
}

async function plain(lines) {
  const res = await generateText(params('plain'));
  lines.push(`content: ${s.quote(res.text)}`);
  lines.push(`finish_reason: ${res.finishReason}`);
  lines.push(`tokens: ${res.usage.totalTokens}`);
}

async function stream(lines) {
  const res = streamText(params('stream'));
  let content = '';
  for await (const delta of res.textStream) content += delta;
  lines.push(`content: ${s.quote(content)}`);
  lines.push(`finish_reason: ${await res.finishReason}`);
}

await s.main('aisdk-node', async (mode, lines) => {
  const run = { plain, stream }[mode];
  if (!run) throw new Error(`mode ${mode} is not supported by this client`);
  await run(lines);
});
