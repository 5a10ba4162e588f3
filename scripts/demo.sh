#!/usr/bin/env bash
# make demo: record the example app against the bundled fake upstream, verify
# the snapshots offline, then show a drift failure with its diff. No API key,
# no network.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
work=$(mktemp -d)
trap 'kill "${fake_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
else
  step() { printf '\n==> %s\n' "$*"; }
fi

step "starting the bundled fake OpenAI upstream (deterministic, loopback only)"
"$BIN/tf-fake-upstream" >"$work/fake.out" 2>&1 &
fake_pid=$!
for _ in $(seq 50); do grep -q FAKE_UPSTREAM_URL "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^FAKE_UPSTREAM_URL=//p' "$work/fake.out")
echo "fake upstream at $url"

snaps="$work/.ai-snapshots"
step "traceforge record -- demo   (3 plain, streamed and tool calls through the recording proxy)"
OPENAI_API_KEY=demo-key-not-secret "$BIN/traceforge" --dir "$snaps" record --openai-upstream "$url/v1" -- "$BIN/demo-app"

step "the snapshots (one JSON file per call, plus manifest.json)"
"$BIN/traceforge" --dir "$snaps" snapshot list

step "traceforge verify   (schema, hashes, manifest, ids, determinism policy, secrets)"
"$BIN/traceforge" --dir "$snaps" verify

step "stopping the upstream: from here on there is no network and no API key"
kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true
env -u OPENAI_API_KEY "$BIN/traceforge" --dir "$snaps" verify -- "$BIN/demo-app"

step "a prompt changes (DEMO_TOPIC): verify fails with the diff"
set +e
DEMO_TOPIC="traceforge 2.0 makes every test flaky" env -u OPENAI_API_KEY "$BIN/traceforge" --dir "$snaps" verify -- "$BIN/demo-app"
code=$?
set -e
if [ "$code" -ne 1 ]; then
  echo "demo: expected verify to exit 1 on drift, got $code" >&2
  exit 1
fi
step "drift caught: verify exited 1 — that is the demo working"
