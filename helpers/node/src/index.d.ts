/** The request header traceforge reads: `X-Traceforge-Source`. */
export declare const HEADER: 'X-Traceforge-Source';

/** Where a call comes from: `file` relative to the project root, slash-separated. */
export interface Source {
  file: string;
  line: number;
  function: string;
}

export interface SourceOptions {
  /** The project root files are made relative to (default `process.cwd()`). */
  root?: string;
  /** Substrings of file paths never to attribute (e.g. your own wrapper module). */
  skip?: string[];
}

export interface TraceforgeFetchOptions extends SourceOptions {
  /** The fetch that sends the request (default `globalThis.fetch`, looked up per call). */
  fetch?: typeof globalThis.fetch;
  /**
   * Track async resources so work a library queues keeps the line that started it.
   * Default: on while `TRACEFORGE_URL` is set (traceforge record/verify set it).
   */
  causality?: boolean;
}

/** A fetch for an SDK's `fetch` option that adds `X-Traceforge-Source` unless the request has one. */
export declare function traceforgeFetch(options?: TraceforgeFetchOptions): typeof globalThis.fetch;

/** Runs `fn` in a scope attributed to the line that called `withSource`. */
export declare function withSource<T>(fn: () => T): T;
/** Runs `fn` in a scope attributed to an explicit source (`file` relative to the project root). */
export declare function withSource<T>(source: { file: string; line: number; function?: string }, fn: () => T): T;

/** The source a call made now would get, or null. */
export declare function currentSource(options?: SourceOptions): Source | null;

/** The source of the first application frame of a stack string, or null. */
export declare function sourceFromStack(stack: string, options?: SourceOptions): Source | null;

/** Percent-encodes one field (file or function) of the header value as UTF-8. */
export declare function encodeField(field: string): string;

/** Formats a source as the header value `file:line:function`, fields encoded. */
export declare function formatSource(source: Source): string;

/** Starts causality tracking (idempotent; traceforgeFetch() and the runner setups call it when TRACEFORGE_URL is set). */
export declare function enableCausality(): void;

/** Also tracks the running node:test test (what `traceforge-source/node-test` calls). */
export declare function enableNodeTestTracking(): void;

/** Stops causality tracking. */
export declare function disableCausality(): void;

/** Registers the running test for runner setups: `file` absolute; null between tests. */
export declare function setCurrentTest(test: { file: string; line?: number; name: string } | null): void;
