// End-to-end client for the Vercel AI SDK (`ai` + `@ai-sdk/openai`): node aisdk.mjs plain|stream|tool.
// The provider reads OPENAI_BASE_URL and OPENAI_API_KEY. `openai(model)` is
// the provider's default, the Responses API (no seed there).
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { traceforgeFetch } from 'traceforge-source';
import { z } from 'zod';
import * as s from './common.mjs';

const openai = createOpenAI({ fetch: traceforgeFetch() });
const model = openai(s.OPENAI_MODEL);

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

// agent: generateText runs get_weather between its steps (two calls).
async function agent(lines) {
  const getWeather = tool({
    description: s.TOOL_DESCRIPTION,
    inputSchema: z.object({ city: z.string().describe('City name, e.g. Paris') }),
    execute: async (args) => JSON.parse(s.runTool(s.TOOL_NAME, args)),
  });
  const res = await generateText({ ...params('tool'), tools: { [s.TOOL_NAME]: getWeather }, stopWhen: stepCountIs(3) });
  res.steps.forEach((step, i) => {
    for (const tc of step.toolCalls) lines.push(`step ${i + 1}: tool_call: ${tc.toolName} ${s.canonical(tc.input)}`);
    lines.push(`step ${i + 1}: finish_reason: ${step.finishReason}`);
  });
  lines.push(`content: ${s.quote(res.text)}`);
  lines.push(`tokens: ${res.totalUsage.totalTokens}`);
}

await s.main('aisdk-node', async (mode, lines) => {
  const run = { plain, stream, tool: agent }[mode];
  await run(lines);
});
