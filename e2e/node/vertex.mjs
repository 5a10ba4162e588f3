// End-to-end client for Vertex AI through `@google/genai` with vertexai:
// true: node vertex.mjs plain|stream. The SDK reads GOOGLE_VERTEX_BASE_URL
// (traceforge sets it to itself); project and location are given; the
// credentials are an OAuth2Client holding a fixed access token with a far
// expiry, so nothing reaches a token endpoint or a metadata server, in
// record and in replay. traceforgeFetch goes in through httpOptions.fetch.
import { GoogleGenAI } from '@google/genai';
import { OAuth2Client } from 'google-auth-library';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

const authClient = new OAuth2Client();
authClient.setCredentials({ access_token: process.env.TF_E2E_VERTEX_TOKEN, expiry_date: Date.now() + 3600e3 });
const ai = new GoogleGenAI({
  vertexai: true,
  project: 'traceforge-e2e',
  location: 'us-central1',
  googleAuthOptions: { authClient },
  httpOptions: { fetch: traceforgeFetch() },
});

function config() {
  return { temperature: 0, seed: s.SEED, maxOutputTokens: s.MAX_TOKENS };
}

async function plain(lines) {
  const r = await ai.models.generateContent({ model: s.GEMINI_MODEL, contents: s.prompt('plain'), config: config() });
  lines.push(`text: ${s.quote(r.text ?? '')}`);
  lines.push(`finish_reason: ${r.candidates?.[0]?.finishReason}`);
  lines.push(`tokens: ${r.usageMetadata?.totalTokenCount}`);
}

async function stream(lines) {
  const st = await ai.models.generateContentStream({ model: s.GEMINI_MODEL, contents: s.prompt('stream'), config: config() });
  let text = '';
  let finish = '';
  for await (const r of st) {
    text += r.text ?? '';
    finish = r.candidates?.[0]?.finishReason ?? finish;
  }
  lines.push(`streamed text: ${s.quote(text)}`);
  lines.push(`finish_reason: ${finish}`);
}

const fns = { plain, stream };
await s.main('vertex-node', (mode, lines) => {
  const fn = fns[mode]; // called plainly: the attributed function is its own name
  return fn(lines);
}, Object.keys(fns));
