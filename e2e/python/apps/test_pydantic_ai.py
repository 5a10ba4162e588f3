"""pydantic-ai: an Agent on OpenAIChatModel, plain (run_sync / run), streamed
(run_stream_sync / run_stream) and with a get_weather tool (the agent runs it
and sends its result back), sync and async; plus the default call (no model
settings). pydantic-ai sends through the async openai client even for
run_sync: its provider takes an httpx2.AsyncClient; OPENAI_BASE_URL and
OPENAI_API_KEY are read by the openai client underneath."""

import httpx2
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings

import traceforge_source
from common import MAX_TOKENS, OPENAI_MODEL, SEED, get_weather, prompt

SETTINGS = ModelSettings(temperature=0, seed=SEED, max_tokens=MAX_TOKENS)


def model():
    return OpenAIChatModel(OPENAI_MODEL, provider=OpenAIProvider(http_client=traceforge_source.install(httpx2.AsyncClient())))


def agent(**kw):
    return Agent(model(), model_settings=SETTINGS, **kw)


def report(transcript, result):
    transcript.add("output", result.output)
    transcript.add("requests", result.usage.requests)
    transcript.add("tokens", result.usage.total_tokens)


def test_plain(transcript):
    result = agent().run_sync(prompt("plain"))  # call
    report(transcript, result)
    assert result.output


async def test_plain_async(transcript):
    result = await agent().run(prompt("plain", "async"))  # call
    report(transcript, result)
    assert result.output


def test_stream(transcript):
    result = agent().run_stream_sync(prompt("stream"))  # call
    text = "".join(result.stream_text(delta=True))
    transcript.add("output", result.get_output())
    assert text == result.get_output()


async def test_stream_async(transcript):
    async with agent().run_stream(prompt("stream", "async")) as result:  # call
        text = "".join([t async for t in result.stream_text(delta=True)])
        output = await result.get_output()
    transcript.add("output", output)
    assert output and text == output


def tool_calls(transcript, result):
    for msg in result.all_messages():
        for part in msg.parts:
            if part.part_kind == "tool-call":
                transcript.add("tool_call", f"{part.tool_name} {part.args_as_json_str()}")
            elif part.part_kind == "tool-return":
                transcript.add("tool_return", f"{part.tool_name} {part.model_response_str()}")


def test_tool(transcript):
    result = agent(tools=[get_weather]).run_sync(prompt("tool"))  # call
    tool_calls(transcript, result)
    report(transcript, result)
    assert result.usage.requests == 2, "want a tool call, then an answer"


async def test_tool_async(transcript):
    result = await agent(tools=[get_weather]).run(prompt("tool", "async"))  # call
    tool_calls(transcript, result)
    report(transcript, result)
    assert result.usage.requests == 2, "want a tool call, then an answer"


def test_default(transcript):
    # What real code writes: Agent("openai:gpt-4o-mini")-style, no model settings.
    result = Agent(model()).run_sync(prompt("default"))  # call
    transcript.add("output", result.output)
    assert result.output
