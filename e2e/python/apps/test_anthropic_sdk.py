"""anthropic (Python): Messages, plain, streamed (raw events and the
messages.stream() helper) and a get_weather tool round trip, sync and async;
plus the SDK's default call (max_tokens, which the SDK requires, and no
temperature, a parameter the 2.x SDK no longer has). The client reads ANTHROPIC_BASE_URL (without /v1) and
ANTHROPIC_API_KEY; it sends through httpx2."""

import httpx2
from anthropic import Anthropic, AsyncAnthropic

import traceforge_source
from common import ANTHROPIC_MODEL, canonical, MAX_TOKENS, TOOL_DESCRIPTION, TOOL_NAME, TOOL_SCHEMA, prompt, run_tool

TOOLS = [{"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": TOOL_SCHEMA}]
# anthropic 2.x has no temperature parameter any more (as anthropic-sdk-go v2):
# the determinism policy's temperature 0 goes in through extra_body.
DETERMINISTIC = {"max_tokens": MAX_TOKENS, "extra_body": {"temperature": 0}}


def client():
    return Anthropic(http_client=traceforge_source.install(httpx2.Client()))


def aclient():
    return AsyncAnthropic(http_client=traceforge_source.install(httpx2.AsyncClient()))


def user(mode, variant=""):
    return [{"role": "user", "content": prompt(mode, variant)}]


def text_of(message):
    return "".join(b.text for b in message.content if b.type == "text")


def test_plain(transcript):
    msg = client().messages.create(model=ANTHROPIC_MODEL, messages=user("plain"), **DETERMINISTIC)  # call
    transcript.add("content", text_of(msg))
    transcript.add("stop_reason", msg.stop_reason)
    transcript.add("tokens", msg.usage.input_tokens + msg.usage.output_tokens)
    assert text_of(msg)


async def test_plain_async(transcript):
    msg = await aclient().messages.create(model=ANTHROPIC_MODEL, messages=user("plain", "async"), **DETERMINISTIC)  # call
    transcript.add("content", text_of(msg))
    transcript.add("stop_reason", msg.stop_reason)
    transcript.add("tokens", msg.usage.input_tokens + msg.usage.output_tokens)
    assert text_of(msg)


def test_stream(transcript):
    # Raw events (stream=True): every event type in order.
    events = client().messages.create(model=ANTHROPIC_MODEL, messages=user("stream"), stream=True, **DETERMINISTIC)  # call
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
    async with aclient().messages.stream(model=ANTHROPIC_MODEL, messages=user("stream", "async"), **DETERMINISTIC) as stream:  # call
        text = "".join([t async for t in stream.text_stream])
        final = await stream.get_final_message()
    transcript.add("content", text_of(final))
    transcript.add("stop_reason", final.stop_reason)
    transcript.add("tokens", final.usage.input_tokens + final.usage.output_tokens)
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
        msg = c.messages.create(model=ANTHROPIC_MODEL, messages=messages, tools=TOOLS, **DETERMINISTIC)  # call
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
        msg = await c.messages.create(model=ANTHROPIC_MODEL, messages=messages, tools=TOOLS, **DETERMINISTIC)  # call
        transcript.add(f"turn {turn}: stop_reason", msg.stop_reason)
        if msg.stop_reason != "tool_use":
            transcript.add(f"turn {turn}: content", text_of(msg))
            break
        messages += [{"role": "assistant", "content": msg.content}, {"role": "user", "content": tool_results(transcript, turn, msg)}]
    assert turn == 2, "want a tool call, then an answer"


def test_default(transcript):
    # What real code sends: max_tokens (the SDK requires it), no temperature.
    msg = client().messages.create(model=ANTHROPIC_MODEL, max_tokens=1024, messages=user("default"))  # call
    transcript.add("content", text_of(msg))
    assert text_of(msg)
