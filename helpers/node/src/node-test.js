// traceforge-source/node-test: load with `node --import traceforge-source/node-test --test`.
// Starts causality tracking before any test is declared, so a call with no
// application frame is attributed to the running node:test test (its file,
// the line that declares it, and its name, suites joined with " > ").
import { enableNodeTestTracking } from './core.cjs';

enableNodeTestTracking();
