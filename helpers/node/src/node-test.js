// traceforge-source/node-test: load with `node --import traceforge-source/node-test --test`.
// Starts causality tracking before any test is declared, so a call with no
// application frame is attributed to the running node:test test (its file,
// the line that declares it, and its name, suites joined with " > ").
// Like causality, it acts only while TRACEFORGE_URL is set (traceforge
// record/verify set it for the command they run).
import { enableNodeTestTracking } from './core.cjs';

enableNodeTestTracking();
