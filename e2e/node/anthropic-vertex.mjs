// End-to-end client for Claude on Vertex AI through `@anthropic-ai/vertex-sdk`:
// node anthropic-vertex.mjs plain|stream. The SDK reads
// ANTHROPIC_VERTEX_BASE_URL (ending in /v1; traceforge sets it to itself)
// and posts to …/projects/{p}/locations/{region}/publishers/anthropic/models/{m}:rawPredict
// (:streamRawPredict when streaming) with anthropic_version in the body.
// Credentials: an OAuth2Client holding a fixed access token with a far
// expiry (no token endpoint, no metadata server, in record and in replay).
// traceforgeFetch attributes every call.
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { OAuth2Client } from 'google-auth-library';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const MODEL = 'claude-sonnet-4@20250514';
const authClient = new OAuth2Client();
authClient.setCredentials({ access_token: process.env.TF_E2E_VERTEX_TOKEN, expiry_date: Date.now() + 3600e3 });
const client = new AnthropicVertex({ region: 'us-east5', projectId: 'traceforge-e2e', authClient, fetch: traceforgeFetch() });

function params(messages) {
  return { model: MODEL, messages, temperature: 0, max_tokens: s.MAX_TOKENS };
}

async function plain(lines) {
  const msg = await client.messages.create(params([{ role: 'user', content: s.prompt('plain') }]));
  lines.push(`content: ${s.quote(msg.content.filter((b) => b.type === 'text').map((b) => b.text).join(''))}`);
  lines.push(`stop_reason: ${msg.stop_reason}`);
  lines.push(`tokens: ${msg.usage.input_tokens + msg.usage.output_tokens}`);
}

async function stream(lines) {
  const st = client.messages.stream(params([{ role: 'user', content: s.prompt('stream') }]));
  const msg = await st.finalMessage();
  lines.push(`content: ${s.quote(msg.content.filter((b) => b.type === 'text').map((b) => b.text).join(''))}`);
  lines.push(`stop_reason: ${msg.stop_reason}`);
}

const fns = { plain, stream };
await s.main('anthropic-vertex-node', (mode, lines) => {
  const fn = fns[mode]; // called plainly: the attributed function is its own name
  return fn(lines);
}, Object.keys(fns));
