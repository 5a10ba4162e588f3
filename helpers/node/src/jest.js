// traceforge-source/jest for Jest's ESM mode (--experimental-vm-modules);
// the CommonJS runtime loads jest.cjs. Jest provides the globals used here.
import { setCurrentTest } from './core.cjs';

/* global beforeEach, afterEach, expect */
beforeEach(() => {
  const { testPath, currentTestName } = expect.getState();
  setCurrentTest({ file: testPath, name: currentTestName });
});

afterEach(() => {
  setCurrentTest(null);
});
