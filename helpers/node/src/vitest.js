// traceforge-source/vitest: a Vitest setup file (test.setupFiles). A call
// with no application frame is attributed to the running test: its file, its
// line (with `includeTaskLocation: true`, else the first frame in the test
// file found through async causality) and its name, suites joined with " > ".
// The line through causality needs TRACEFORGE_URL set, as traceforge sets it.
import { afterEach, beforeEach } from 'vitest';
import { setCurrentTest } from './core.cjs';

function fullName(task) {
  const names = [task.name];
  for (let s = task.suite; s && s !== task.file && !s.filepath; s = s.suite) {
    if (s.name) names.unshift(s.name);
  }
  return names.join(' > ');
}

beforeEach((ctx) => {
  const task = ctx.task;
  setCurrentTest({ file: task.file?.filepath, line: task.location?.line, name: fullName(task) });
});

afterEach(() => {
  setCurrentTest(null);
});
