// End-to-end client for LangChain JS (`@langchain/openai`): node langchain.mjs plain|stream.
// ChatOpenAI's client reads OPENAI_BASE_URL and OPENAI_API_KEY. LangChain sends
// from its own queue, so no application frame is on the stack when fetch
// runs: traceforgeFetch finds the line through async causality.
import { chatModel } from './langchain-model.mjs';
import * as s from './common.mjs';

const model = chatModel();

async function plain(lines) {
  const msg = await model.invoke([['user', s.prompt('plain')]]);
  lines.push(`content: ${s.quote(String(msg.content))}`);
  lines.push(`finish_reason: ${msg.response_metadata?.finish_reason}`);
}

async function stream(lines) {
  const st = await model.stream([['user', s.prompt('stream')]]);
  let content = '';
  let finish = '';
  for await (const chunk of st) {
    content += String(chunk.content ?? '');
    if (chunk.response_metadata?.finish_reason) finish = chunk.response_metadata.finish_reason;
  }
  lines.push(`content: ${s.quote(content)}`);
  lines.push(`finish_reason: ${finish}`);
}

await s.main('langchain-node', async (mode, lines) => {
  const run = { plain, stream }[mode];
  if (!run) throw new Error(`mode ${mode} is not supported by this client`);
  await run(lines);
});
