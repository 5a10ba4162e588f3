"""litellm: completion / acompletion to an OpenAI model, plain, streamed and a
get_weather tool round trip, sync and async; plus the default call (no
temperature, seed or max tokens). litellm sends OpenAI calls through the
openai client, with the httpx clients set on litellm.client_session and
litellm.aclient_session; it reads OPENAI_BASE_URL and OPENAI_API_KEY.
conftest.py sets LITELLM_LOCAL_MODEL_COST_MAP before the import: litellm
otherwise fetches its price list over the network when imported."""

import httpx
import litellm
import pytest

import traceforge_source
from common import MAX_TOKENS, OPENAI_MODEL, SEED, TOOL_DESCRIPTION, TOOL_NAME, TOOL_SCHEMA, prompt, run_tool

MODEL = "openai/" + OPENAI_MODEL
TOOLS = [{"type": "function", "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "parameters": TOOL_SCHEMA}}]
DETERMINISTIC = {"temperature": 0, "seed": SEED, "max_tokens": MAX_TOKENS}


@pytest.fixture(autouse=True)
def sessions(monkeypatch):
    monkeypatch.setattr(litellm, "client_session", traceforge_source.install(httpx.Client()))
    monkeypatch.setattr(litellm, "aclient_session", traceforge_source.install(httpx.AsyncClient()))


def user(mode, variant=""):
    return [{"role": "user", "content": prompt(mode, variant)}]


def test_plain(transcript):
    resp = litellm.completion(model=MODEL, messages=user("plain"), **DETERMINISTIC)  # call
    transcript.add("content", resp.choices[0].message.content)
    transcript.add("finish_reason", resp.choices[0].finish_reason)
    transcript.add("tokens", resp.usage.total_tokens)
    assert resp.choices[0].message.content


async def test_plain_async(transcript):
    resp = await litellm.acompletion(model=MODEL, messages=user("plain", "async"), **DETERMINISTIC)  # call
    transcript.add("content", resp.choices[0].message.content)
    transcript.add("finish_reason", resp.choices[0].finish_reason)
    transcript.add("tokens", resp.usage.total_tokens)
    assert resp.choices[0].message.content


def test_stream(transcript):
    content, finish = "", None
    for chunk in litellm.completion(model=MODEL, messages=user("stream"), stream=True, **DETERMINISTIC):  # call
        content += chunk.choices[0].delta.content or ""
        finish = chunk.choices[0].finish_reason or finish
    transcript.add("content", content)
    transcript.add("finish_reason", finish)
    assert content and finish


async def test_stream_async(transcript):
    content, finish = "", None
    async for chunk in await litellm.acompletion(model=MODEL, messages=user("stream", "async"), stream=True, **DETERMINISTIC):  # call
        content += chunk.choices[0].delta.content or ""
        finish = chunk.choices[0].finish_reason or finish
    transcript.add("content", content)
    transcript.add("finish_reason", finish)
    assert content and finish


def tool_messages(transcript, turn, msg):
    out = [msg.model_dump(exclude_none=True)]
    for tc in msg.tool_calls:
        transcript.add(f"turn {turn}: tool_call", f"{tc.function.name} {tc.function.arguments}")
        out.append({"role": "tool", "tool_call_id": tc.id, "content": run_tool(tc.function.name, tc.function.arguments)})
    return out


def test_tool(transcript):
    messages = user("tool")
    for turn in range(1, 4):
        resp = litellm.completion(model=MODEL, messages=messages, tools=TOOLS, **DETERMINISTIC)  # call
        msg = resp.choices[0].message
        transcript.add(f"turn {turn}: finish_reason", resp.choices[0].finish_reason)
        if not msg.tool_calls:
            transcript.add(f"turn {turn}: content", msg.content)
            break
        messages += tool_messages(transcript, turn, msg)
    assert turn == 2, "want a tool call, then an answer"


async def test_tool_async(transcript):
    messages = user("tool", "async")
    for turn in range(1, 4):
        resp = await litellm.acompletion(model=MODEL, messages=messages, tools=TOOLS, **DETERMINISTIC)  # call
        msg = resp.choices[0].message
        transcript.add(f"turn {turn}: finish_reason", resp.choices[0].finish_reason)
        if not msg.tool_calls:
            transcript.add(f"turn {turn}: content", msg.content)
            break
        messages += tool_messages(transcript, turn, msg)
    assert turn == 2, "want a tool call, then an answer"


def test_default(transcript):
    # What real code writes: completion(model=..., messages=...).
    resp = litellm.completion(model=MODEL, messages=user("default"))  # call
    transcript.add("content", resp.choices[0].message.content)
    assert resp.choices[0].message.content
