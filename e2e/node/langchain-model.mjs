// The LangChain JS chat model of langchain.mjs and runner.test.mjs: its
// OpenAI client reads OPENAI_BASE_URL and OPENAI_API_KEY and sends through
// traceforgeFetch.
import { ChatOpenAI } from '@langchain/openai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

export function chatModel() {
  return new ChatOpenAI({
    model: s.OPENAI_MODEL,
    temperature: 0,
    maxTokens: s.MAX_TOKENS,
    modelKwargs: { seed: s.SEED },
    configuration: { fetch: traceforgeFetch() },
  });
}
