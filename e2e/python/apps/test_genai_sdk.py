"""google-genai: generate_content, plain, streamed and a get_weather tool
round trip (sync: the SDK's automatic function calling runs a Python function;
async: a function declaration answered by hand with a function response);
plus the SDK's default call (no generation config). The client reads
GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY; its httpx clients come in through
HttpOptions (an explicit httpx_async_client also keeps the async calls off
aiohttp, which the SDK prefers when it is installed)."""

import httpx
from google import genai
from google.genai import types

import traceforge_source
from common import GEMINI_MODEL, MAX_TOKENS, SEED, TOOL_DESCRIPTION, TOOL_NAME, TOOL_SCHEMA, canonical, get_weather, prompt, run_tool


def client():
    return genai.Client(
        http_options=types.HttpOptions(
            httpx_client=traceforge_source.install(httpx.Client()),
            httpx_async_client=traceforge_source.install(httpx.AsyncClient()),
        )
    )


def config(**kw):
    return types.GenerateContentConfig(temperature=0, seed=SEED, max_output_tokens=MAX_TOKENS, **kw)


def test_plain(transcript):
    resp = client().models.generate_content(model=GEMINI_MODEL, contents=prompt("plain"), config=config())  # call
    transcript.add("content", resp.text)
    transcript.add("finish_reason", resp.candidates[0].finish_reason.name)
    transcript.add("tokens", resp.usage_metadata.total_token_count)
    assert resp.text


async def test_plain_async(transcript):
    resp = await client().aio.models.generate_content(model=GEMINI_MODEL, contents=prompt("plain", "async"), config=config())  # call
    transcript.add("content", resp.text)
    transcript.add("finish_reason", resp.candidates[0].finish_reason.name)
    transcript.add("tokens", resp.usage_metadata.total_token_count)
    assert resp.text


def test_stream(transcript):
    content, finish = "", None
    for chunk in client().models.generate_content_stream(model=GEMINI_MODEL, contents=prompt("stream"), config=config()):  # call
        content += chunk.text or ""
        if chunk.candidates and chunk.candidates[0].finish_reason:
            finish = chunk.candidates[0].finish_reason.name
    transcript.add("content", content)
    transcript.add("finish_reason", finish)
    assert content and finish


async def test_stream_async(transcript):
    content, finish = "", None
    async for chunk in await client().aio.models.generate_content_stream(  # call
        model=GEMINI_MODEL, contents=prompt("stream", "async"), config=config()
    ):
        content += chunk.text or ""
        if chunk.candidates and chunk.candidates[0].finish_reason:
            finish = chunk.candidates[0].finish_reason.name
    transcript.add("content", content)
    transcript.add("finish_reason", finish)
    assert content and finish


def test_tool(transcript):
    # Automatic function calling: the SDK calls get_weather and sends its
    # result back itself (two calls from this one line).
    resp = client().models.generate_content(model=GEMINI_MODEL, contents=prompt("tool"), config=config(tools=[get_weather]))  # call
    for content in resp.automatic_function_calling_history or []:
        for part in content.parts:
            if part.function_call:
                transcript.add("function_call", f"{part.function_call.name} {canonical(part.function_call.args)}")
    transcript.add("content", resp.text)
    assert len(resp.automatic_function_calling_history or []) == 3, "want the prompt, a function call and its response"
    assert resp.text


async def test_tool_async(transcript):
    c = client()
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(name=TOOL_NAME, description=TOOL_DESCRIPTION, parameters_json_schema=TOOL_SCHEMA)])
    contents = [types.Content(role="user", parts=[types.Part(text=prompt("tool", "async"))])]
    for turn in range(1, 4):
        resp = await c.aio.models.generate_content(model=GEMINI_MODEL, contents=contents, config=config(tools=[tool]))  # call
        calls = resp.function_calls or []
        transcript.add(f"turn {turn}: finish_reason", resp.candidates[0].finish_reason.name)
        if not calls:
            transcript.add(f"turn {turn}: content", resp.text)
            break
        contents.append(resp.candidates[0].content)
        parts = []
        for fc in calls:
            transcript.add(f"turn {turn}: function_call", f"{fc.name} {canonical(fc.args)}")
            parts.append(types.Part.from_function_response(name=fc.name, response={"result": run_tool(fc.name, fc.args)}))
        contents.append(types.Content(role="user", parts=parts))
    assert turn == 2, "want a function call, then an answer"


def test_default(transcript):
    # What real code sends: no generation config at all.
    resp = client().models.generate_content(model=GEMINI_MODEL, contents=prompt("default"))  # call
    transcript.add("content", resp.text)
    assert resp.text
