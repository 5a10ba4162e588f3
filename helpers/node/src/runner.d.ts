// Test-runner setup files (traceforge-source/node-test, /vitest, /jest) export nothing:
// loading one is the whole setup.
export {};
