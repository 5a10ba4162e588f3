// End-to-end client for the AI SDK's Anthropic provider (`ai` +
// `@ai-sdk/anthropic`): node aisdk-anthropic.mjs plain|stream. The provider
// reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL as a base ending in /v1 (it
// appends /messages); traceforge sets it without /v1 and serves /messages too.
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, streamText } from 'ai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const anthropic = createAnthropic({ fetch: traceforgeFetch() });
const model = anthropic(s.ANTHROPIC_MODEL);

function params(mode) {
  return { model, prompt: s.prompt(mode), temperature: 0, maxOutputTokens: s.MAX_TOKENS, maxRetries: 0 };
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
  lines.push(`tokens: ${(await res.usage).totalTokens}`);
}

await s.main('aisdk-anthropic-node', async (mode, lines) => {
  const run = { plain, stream }[mode];
  if (!run) throw new Error(`mode ${mode} is not supported by this client`);
  await run(lines);
});
