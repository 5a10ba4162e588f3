// The runner setup for runner.test.mjs. A project whose node_modules is at its
// root passes the package itself: node --import traceforge-source/node-test.
// This folder's node_modules is one level down from the project root (e2e/),
// so the import goes through this file.
import 'traceforge-source/node-test';
