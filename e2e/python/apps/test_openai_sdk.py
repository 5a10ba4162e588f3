"""openai (Python): Chat Completions, plain, streamed and a get_weather tool
round trip, sync and async; plus the SDK's default call (no temperature, seed
or max tokens). The client reads OPENAI_BASE_URL and OPENAI_API_KEY;
traceforge_source.install attributes every call (the SDK sends through httpx2)."""

import httpx2
from openai import AsyncOpenAI, OpenAI

import traceforge_source
from common import MAX_TOKENS, OPENAI_MODEL, SEED, TOOL_DESCRIPTION, TOOL_NAME, TOOL_SCHEMA, prompt, run_tool

TOOLS = [{"type": "function", "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "parameters": TOOL_SCHEMA}}]
DETERMINISTIC = {"temperature": 0, "seed": SEED, "max_tokens": MAX_TOKENS}


def client():
    return OpenAI(http_client=traceforge_source.install(httpx2.Client()))


def aclient():
    return AsyncOpenAI(http_client=traceforge_source.install(httpx2.AsyncClient()))


def user(mode, variant=""):
    return [{"role": "user", "content": prompt(mode, variant)}]


def test_plain(transcript):
    resp = client().chat.completions.create(model=OPENAI_MODEL, messages=user("plain"), **DETERMINISTIC)  # call
    transcript.add("content", resp.choices[0].message.content)
    transcript.add("finish_reason", resp.choices[0].finish_reason)
    transcript.add("tokens", resp.usage.total_tokens)
    assert resp.choices[0].message.content


async def test_plain_async(transcript):
    resp = await aclient().chat.completions.create(model=OPENAI_MODEL, messages=user("plain", "async"), **DETERMINISTIC)  # call
    transcript.add("content", resp.choices[0].message.content)
    transcript.add("finish_reason", resp.choices[0].finish_reason)
    transcript.add("tokens", resp.usage.total_tokens)
    assert resp.choices[0].message.content


def test_stream(transcript):
    stream = client().chat.completions.create(  # call
        model=OPENAI_MODEL, messages=user("stream"), stream=True, stream_options={"include_usage": True}, **DETERMINISTIC
    )
    content, finish, tokens = "", None, None
    for chunk in stream:
        for choice in chunk.choices:
            content += choice.delta.content or ""
            finish = choice.finish_reason or finish
        if chunk.usage:
            tokens = chunk.usage.total_tokens
    transcript.add("content", content)
    transcript.add("finish_reason", finish)
    transcript.add("tokens", tokens)
    assert content and finish and tokens


async def test_stream_async(transcript):
    # The SDK's helper: client.chat.completions.stream(...) accumulates the events.
    async with aclient().chat.completions.stream(model=OPENAI_MODEL, messages=user("stream", "async"), **DETERMINISTIC) as stream:  # call
        text = "".join([e.delta async for e in stream if e.type == "content.delta"])
        final = await stream.get_final_completion()
    transcript.add("content", final.choices[0].message.content)
    transcript.add("finish_reason", final.choices[0].finish_reason)
    assert text == final.choices[0].message.content


def test_tool(transcript):
    c = client()
    messages = user("tool")
    for turn in range(1, 4):
        resp = c.chat.completions.create(model=OPENAI_MODEL, messages=messages, tools=TOOLS, **DETERMINISTIC)  # call
        msg = resp.choices[0].message
        transcript.add(f"turn {turn}: finish_reason", resp.choices[0].finish_reason)
        if not msg.tool_calls:
            transcript.add(f"turn {turn}: content", msg.content)
            break
        messages.append(msg.model_dump(exclude_none=True))
        for tc in msg.tool_calls:
            transcript.add(f"turn {turn}: tool_call", f"{tc.function.name} {tc.function.arguments}")
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": run_tool(tc.function.name, tc.function.arguments)})
    assert turn == 2, "want a tool call, then an answer"


async def test_tool_async(transcript):
    c = aclient()
    messages = user("tool", "async")
    for turn in range(1, 4):
        resp = await c.chat.completions.create(model=OPENAI_MODEL, messages=messages, tools=TOOLS, **DETERMINISTIC)  # call
        msg = resp.choices[0].message
        transcript.add(f"turn {turn}: finish_reason", resp.choices[0].finish_reason)
        if not msg.tool_calls:
            transcript.add(f"turn {turn}: content", msg.content)
            break
        messages.append(msg.model_dump(exclude_none=True))
        for tc in msg.tool_calls:
            transcript.add(f"turn {turn}: tool_call", f"{tc.function.name} {tc.function.arguments}")
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": run_tool(tc.function.name, tc.function.arguments)})
    assert turn == 2, "want a tool call, then an answer"


def test_default(transcript):
    # What real code sends: no temperature, seed or max tokens.
    resp = client().chat.completions.create(model=OPENAI_MODEL, messages=user("default"))  # call
    transcript.add("content", resp.choices[0].message.content)
    assert resp.choices[0].message.content
