// traceforge-source: sets X-Traceforge-Source (file:line:function of your
// code) on the requests an LLM SDK sends, for traceforge snapshot testing.
//
//   import OpenAI from 'openai';
//   import { traceforgeFetch } from 'traceforge-source';
//   const openai = new OpenAI({ fetch: traceforgeFetch() });
//
// The implementation is core.cjs (shared with Jest's CommonJS runtime).
export * from './core.cjs';
