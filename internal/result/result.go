// Package result holds what traceforge's commands produce, as values: the
// verify report (static findings, what replay saw, live results) and its
// pass/fail policy, the record summary, the migration plan, and a run's
// totals. Commands build them; internal/render formats them, in every
// output format, and nothing here prints.
package result
