'use strict';
// traceforge-source/jest: a Jest setup file (setupFilesAfterEnv). A call
// with no application frame is attributed to the running test: its file, the
// first frame in the test file found through async causality (Jest does not
// expose a test's line; needs TRACEFORGE_URL set, as traceforge sets it) and
// its name as Jest prints it.
const { setCurrentTest } = require('./core.cjs');

beforeEach(() => {
  const { testPath, currentTestName } = expect.getState();
  setCurrentTest({ file: testPath, name: currentTestName });
});

afterEach(() => {
  setCurrentTest(null);
});
