// End-to-end client for LangChain JS on the Responses API (`ChatOpenAI` with
// useResponsesApi: true): node langchain-resp.mjs plain|stream. As
// langchain.mjs otherwise.
import { chatModel } from './langchain-model.mjs';
import * as s from './common.mjs';

const model = chatModel({ responses: true });

async function plain(lines) {
  const msg = await model.invoke([['user', s.prompt('plain')]]);
  lines.push(`content: ${s.quote(msg.text)}`);
  lines.push(`status: ${msg.response_metadata?.status}`);
  lines.push(`tokens: ${msg.usage_metadata?.total_tokens}`);
}

async function stream(lines) {
  const st = await model.stream([['user', s.prompt('stream')]]);
  let content = '';
  let tokens;
  for await (const chunk of st) {
    content += chunk.text;
    if (chunk.usage_metadata) tokens = chunk.usage_metadata.total_tokens;
  }
  lines.push(`content: ${s.quote(content)}`);
  lines.push(`tokens: ${tokens}`);
}

await s.main('langchain-resp-node', async (mode, lines) => {
  const run = { plain, stream }[mode];
  if (!run) throw new Error(`mode ${mode} is not supported by this client`);
  await run(lines);
});
