#!/usr/bin/env bash
# Re-record the project's own .ai-snapshots/ from examples/demo against the
# bundled fake upstream. Unchanged calls keep their files byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
bin/tf-fake-upstream >"$out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 50); do grep -q FAKE_UPSTREAM_URL "$out" && break; sleep 0.1; done
url=$(sed -n 's/^FAKE_UPSTREAM_URL=//p' "$out")
OPENAI_API_KEY=demo-key-not-secret bin/traceforge record --prune --openai-upstream "$url/v1" -- bin/demo-app
