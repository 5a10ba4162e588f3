// End-to-end client for the OpenAI Agents SDK (`@openai/agents`): node agents.mjs plain|stream.
// The default client is an `openai` client with traceforgeFetch; it reads
// OPENAI_BASE_URL and OPENAI_API_KEY. The SDK's default API, the Responses
// API (so no seed). Tracing is off (it would export to api.openai.com).
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

setTracingDisabled(true);
setDefaultOpenAIClient(new OpenAI({ fetch: traceforgeFetch(), maxRetries: 0 }));

const agent = new Agent({
  name: 'Greeter',
  instructions: 'Answer in one short sentence.',
  model: s.OPENAI_MODEL,
  modelSettings: { temperature: 0, maxTokens: s.MAX_TOKENS },
});

async function plain(lines) {
  const result = await run(agent, s.prompt('plain'));
  lines.push(`content: ${s.quote(result.finalOutput ?? '')}`);
}

async function stream(lines) {
  const result = await run(agent, s.prompt('stream'), { stream: true });
  let content = '';
  for await (const delta of result.toTextStream()) content += delta;
  await result.completed;
  lines.push(`content: ${s.quote(content)}`);
  lines.push(`final_output: ${s.quote(result.finalOutput ?? '')}`);
}

await s.main('agents-node', async (mode, lines) => {
  const runMode = { plain, stream }[mode];
  if (!runMode) throw new Error(`mode ${mode} is not supported by this client`);
  await runMode(lines);
});
