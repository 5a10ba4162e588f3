"""langchain-openai: ChatOpenAI (Chat Completions, its default), invoke,
stream and a get_weather tool round trip (bind_tools, then a ToolMessage), sync
and async; plus the default call (no temperature, seed or max tokens).
ChatOpenAI takes the sync and async httpx clients separately (http_client,
http_async_client); the openai client underneath reads OPENAI_BASE_URL and
OPENAI_API_KEY."""

import httpx
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

import traceforge_source
from common import MAX_TOKENS, OPENAI_MODEL, SEED, canonical, get_weather, prompt, run_tool


def chat(**kw):
    return ChatOpenAI(
        model=OPENAI_MODEL,
        http_client=traceforge_source.install(httpx.Client()),
        http_async_client=traceforge_source.install(httpx.AsyncClient()),
        **kw,
    )


def model():
    return chat(temperature=0, seed=SEED, max_tokens=MAX_TOKENS)


def test_plain(transcript):
    msg = model().invoke(prompt("plain"))  # call
    transcript.add("content", msg.content)
    transcript.add("finish_reason", msg.response_metadata["finish_reason"])
    transcript.add("tokens", msg.usage_metadata["total_tokens"])
    assert msg.content


async def test_plain_async(transcript):
    msg = await model().ainvoke(prompt("plain", "async"))  # call
    transcript.add("content", msg.content)
    transcript.add("finish_reason", msg.response_metadata["finish_reason"])
    transcript.add("tokens", msg.usage_metadata["total_tokens"])
    assert msg.content


def test_stream(transcript):
    content = ""
    for chunk in model().stream(prompt("stream")):  # call
        content += chunk.content
    transcript.add("content", content)
    assert content


async def test_stream_async(transcript):
    content = ""
    async for chunk in model().astream(prompt("stream", "async")):  # call
        content += chunk.content
    transcript.add("content", content)
    assert content


def tool_messages(transcript, turn, msg):
    out = []
    for tc in msg.tool_calls:
        transcript.add(f"turn {turn}: tool_call", f"{tc['name']} {canonical(tc['args'])}")
        out.append(ToolMessage(content=run_tool(tc["name"], tc["args"]), tool_call_id=tc["id"]))
    return out


def test_tool(transcript):
    llm = model().bind_tools([get_weather])
    messages = [HumanMessage(prompt("tool"))]
    for turn in range(1, 4):
        msg = llm.invoke(messages)  # call
        if not msg.tool_calls:
            transcript.add(f"turn {turn}: content", msg.content)
            break
        messages += [msg, *tool_messages(transcript, turn, msg)]
    assert turn == 2, "want a tool call, then an answer"


async def test_tool_async(transcript):
    llm = model().bind_tools([get_weather])
    messages = [HumanMessage(prompt("tool", "async"))]
    for turn in range(1, 4):
        msg = await llm.ainvoke(messages)  # call
        if not msg.tool_calls:
            transcript.add(f"turn {turn}: content", msg.content)
            break
        messages += [msg, *tool_messages(transcript, turn, msg)]
    assert turn == 2, "want a tool call, then an answer"


def test_default(transcript):
    # What real code writes: ChatOpenAI(model=...) and nothing else.
    msg = chat().invoke(prompt("default"))  # call
    transcript.add("content", msg.content)
    assert msg.content
