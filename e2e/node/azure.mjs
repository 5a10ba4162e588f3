// End-to-end client for Azure OpenAI through the `openai` npm SDK's
// AzureOpenAI: node azure.mjs plain|stream|endpoint-trap.
// Under traceforge, COMMAND gets OPENAI_BASE_URL and AZURE_OPENAI_ENDPOINT.
// AzureOpenAI reads OPENAI_BASE_URL as its baseURL default and refuses
// `endpoint` together with a base URL, so the base URL is given explicitly:
// AZURE_OPENAI_ENDPOINT + "/openai" (the setup docs/providers.md shows).
// traceforgeFetch attributes every call.
import { AzureOpenAI } from 'openai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const DEPLOYMENT = 'gpt-4o';
const client = new AzureOpenAI({
  baseURL: `${process.env.AZURE_OPENAI_ENDPOINT}/openai`,
  apiVersion: '2024-10-21',
  apiKey: process.env.AZURE_OPENAI_API_KEY,
  fetch: traceforgeFetch(),
});

function params(messages) {
  return { model: DEPLOYMENT, messages, temperature: 0, seed: s.SEED, max_tokens: s.MAX_TOKENS };
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
  for await (const chunk of st) {
    for (const c of chunk.choices) {
      content += c.delta?.content ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  lines.push(`content: ${s.quote(content)}`);
  lines.push(`finish_reason: ${finish}`);
}

// endpointTrap shows why: `endpoint` while OPENAI_BASE_URL is set throws
// before any call.
async function endpointTrap(lines) {
  try {
    new AzureOpenAI({ endpoint: process.env.AZURE_OPENAI_ENDPOINT, apiVersion: '2024-10-21', apiKey: 'k' });
    lines.push('endpoint accepted');
  } catch (e) {
    lines.push(`endpoint refused: ${e.message}`);
  }
}

const fns = { plain, stream, 'endpoint-trap': endpointTrap };
await s.main('azure-node', (mode, lines) => {
  const fn = fns[mode]; // called plainly: the attributed function is its own name
  return fn(lines);
}, Object.keys(fns));
