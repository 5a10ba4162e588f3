"""anthropic's AnthropicVertex (Python): Claude on Vertex AI, messages.create
plain, streamed (raw events, and the messages.stream() helper async) and a
get_weather tool round trip, sync and async; plus the SDK's default call
(only the max_tokens the SDK requires). The SDK reads
ANTHROPIC_VERTEX_BASE_URL (ending in /v1; traceforge sets it to itself) and
posts to …/projects/{p}/locations/{region}/publishers/anthropic/models/{m}:rawPredict
(:streamRawPredict when streaming), the model moved from the body to the
path and anthropic_version put in the body.

Credentials: access_token= given explicitly, so the SDK sends it as a bearer
token and never loads google-auth (no token endpoint, no metadata server).
The harness gives a ya29. token in TF_E2E_VERTEX_TOKEN when recording; in
replay the app uses "traceforge-replay", as docs/providers.md says."""

import os

import httpx2
from anthropic import AnthropicVertex, AsyncAnthropicVertex

import traceforge_source
from common import MAX_TOKENS, TOOL_DESCRIPTION, TOOL_NAME, TOOL_SCHEMA, VERTEX_CLAUDE_MODEL, canonical, prompt, run_tool

PROJECT = "traceforge-e2e"
REGION = "us-east5"
TOOLS = [{"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": TOOL_SCHEMA}]
# anthropic 2.x has no temperature parameter: temperature 0 through extra_body.
DETERMINISTIC = {"max_tokens": MAX_TOKENS, "extra_body": {"temperature": 0}}


def token():
    return os.environ.get("TF_E2E_VERTEX_TOKEN") or "traceforge-replay"


def client():
    return AnthropicVertex(region=REGION, project_id=PROJECT, access_token=token(), http_client=traceforge_source.install(httpx2.Client()))


def aclient():
    return AsyncAnthropicVertex(region=REGION, project_id=PROJECT, access_token=token(), http_client=traceforge_source.install(httpx2.AsyncClient()))


def user(mode, variant=""):
    return [{"role": "user", "content": prompt(mode, variant)}]


def text_of(message):
    return "".join(b.text for b in message.content if b.type == "text")


def describe(transcript, msg):
    transcript.add("content", text_of(msg))
    transcript.add("stop_reason", msg.stop_reason)
    transcript.add("tokens", msg.usage.input_tokens + msg.usage.output_tokens)


def test_plain(transcript):
    msg = client().messages.create(model=VERTEX_CLAUDE_MODEL, messages=user("plain"), **DETERMINISTIC)  # call
    describe(transcript, msg)
    assert text_of(msg)


async def test_plain_async(transcript):
    msg = await aclient().messages.create(model=VERTEX_CLAUDE_MODEL, messages=user("plain", "async"), **DETERMINISTIC)  # call
    describe(transcript, msg)
    assert text_of(msg)


def test_stream(transcript):
    # Raw events (stream=True, :streamRawPredict): every event type in order.
    events = client().messages.create(model=VERTEX_CLAUDE_MODEL, messages=user("stream"), stream=True, **DETERMINISTIC)  # call
    content, stop, types = "", None, []
    for event in events:
        if not types or types[-1] != event.type:
            types.append(event.type)  # runs collapsed: replay may re-chunk the deltas
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            content += event.delta.text
        elif event.type == "message_delta":
            stop = event.delta.stop_reason
    transcript.add("events", " ".join(types))
    transcript.add("content", content)
    transcript.add("stop_reason", stop)
    assert content and stop


async def test_stream_async(transcript):
    # The SDK's helper accumulates the events into the final message.
    async with aclient().messages.stream(model=VERTEX_CLAUDE_MODEL, messages=user("stream", "async"), **DETERMINISTIC) as stream:  # call
        text = "".join([t async for t in stream.text_stream])
        final = await stream.get_final_message()
    describe(transcript, final)
    assert text == text_of(final)


def tool_results(transcript, turn, msg):
    results = []
    for block in msg.content:
        if block.type == "tool_use":
            transcript.add(f"turn {turn}: tool_use", f"{block.name} {canonical(block.input)}")
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": run_tool(block.name, block.input)})
    return results


def test_tool(transcript):
    c = client()
    messages = user("tool")
    for turn in range(1, 4):
        msg = c.messages.create(model=VERTEX_CLAUDE_MODEL, messages=messages, tools=TOOLS, **DETERMINISTIC)  # call
        transcript.add(f"turn {turn}: stop_reason", msg.stop_reason)
        if msg.stop_reason != "tool_use":
            transcript.add(f"turn {turn}: content", text_of(msg))
            break
        messages += [{"role": "assistant", "content": msg.content}, {"role": "user", "content": tool_results(transcript, turn, msg)}]
    assert turn == 2, "want a tool call, then an answer"


async def test_tool_async(transcript):
    c = aclient()
    messages = user("tool", "async")
    for turn in range(1, 4):
        msg = await c.messages.create(model=VERTEX_CLAUDE_MODEL, messages=messages, tools=TOOLS, **DETERMINISTIC)  # call
        transcript.add(f"turn {turn}: stop_reason", msg.stop_reason)
        if msg.stop_reason != "tool_use":
            transcript.add(f"turn {turn}: content", text_of(msg))
            break
        messages += [{"role": "assistant", "content": msg.content}, {"role": "user", "content": tool_results(transcript, turn, msg)}]
    assert turn == 2, "want a tool call, then an answer"


def test_default(transcript):
    # What real code sends: max_tokens (the SDK requires it), no temperature.
    msg = client().messages.create(model=VERTEX_CLAUDE_MODEL, max_tokens=1024, messages=user("default"))  # call
    transcript.add("content", text_of(msg))
    assert text_of(msg)
