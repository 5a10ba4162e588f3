// The LangChain JS chat model of langchain.mjs and runner.test.mjs: its
// OpenAI client reads OPENAI_BASE_URL and OPENAI_API_KEY and sends through
// traceforgeFetch. Chat Completions (LangChain's default), or with
// { responses: true } the Responses API (useResponsesApi; no seed there).
import { ChatOpenAI } from '@langchain/openai';
import { traceforgeFetch } from 'traceforge-source';
import * as s from './common.mjs';

export function chatModel({ responses = false } = {}) {
  return new ChatOpenAI({
    model: s.OPENAI_MODEL,
    temperature: 0,
    maxTokens: s.MAX_TOKENS,
    ...(responses ? { useResponsesApi: true } : { modelKwargs: { seed: s.SEED } }),
    configuration: { fetch: traceforgeFetch() },
  });
}
