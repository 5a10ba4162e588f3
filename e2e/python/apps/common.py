"""Shared by the Python end-to-end apps: models, prompts, the get_weather tool
and the framed transcript (as the Go and Node clients print it)."""

import json
import os

import traceforge_source

OPENAI_MODEL = "gpt-4o-mini"
ANTHROPIC_MODEL = "claude-3-5-haiku-latest"
GEMINI_MODEL = "gemini-2.5-flash"
BEDROCK_MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
VERTEX_CLAUDE_MODEL = "claude-sonnet-4@20250514"
MAX_TOKENS = 64
SEED = 42
TOOL_NAME = "get_weather"
TOOL_DESCRIPTION = "Get the current weather for a city."
TOOL_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}},
    "required": ["city"],
}

_PROMPTS = {
    "plain": "Say hello to Ada Lovelace in one short sentence.",
    "stream": "Write one line about Grace Hopper and compilers.",
    "tool": "What is the weather in Paris today?",
    "default": "Name one thing Alan Turing is known for.",
}


def prompt(mode, variant=""):
    """The user prompt for mode, with TF_E2E_PROMPT_SUFFIX appended (drift).

    ``variant`` ("async") makes the async test's requests differ from the sync
    one's: identical requests share one snapshot, which keeps the first
    caller's source, and each test's attribution is checked."""
    text = _PROMPTS[mode]
    if variant:
        text = text[:-1] + f" ({variant} client)" + text[-1]
    return text + os.environ.get("TF_E2E_PROMPT_SUFFIX", "")


def run_tool(name, args):
    """Runs get_weather: a fixed answer derived from the arguments."""
    try:
        city = (json.loads(args) if isinstance(args, str) else dict(args)).get("city", "")
    except (ValueError, TypeError, AttributeError):
        city = ""
    if name != TOOL_NAME or not city:
        return '{"error":"unknown tool or bad arguments"}'
    return json.dumps({"city": city, "conditions": "sunny", "temperature_c": 21}, separators=(",", ":"))


def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return run_tool(TOOL_NAME, {"city": city})


def attribute_botocore(client):
    """Sets X-Traceforge-Source on every request of a boto3 client, before
    botocore signs it (botocore sends through urllib3, not httpx, so
    traceforge_source.install does not apply): a before-sign hook gives
    current_source() the stack of the SDK call. This file is skipped, or the
    hook itself would be the first application frame."""

    def hook(request, **_):
        if traceforge_source.HEADER not in request.headers:
            src = traceforge_source.current_source(skip=(_THIS_FILE,))
            if src is not None:
                request.headers[traceforge_source.HEADER] = traceforge_source.format_source(*src)

    client.meta.events.register(f"before-sign.{client.meta.service_model.service_id.hyphenize()}", hook)
    return client


_THIS_FILE = os.path.realpath(__file__)


def canonical(value):
    """JSON with sorted keys, compact: equal values print the same."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return json.dumps(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class Transcript:
    """What the application saw, printed framed at the end of the test:
    ``=== <test> ===`` … ``=== end ===`` (content, tool calls, finish reason,
    token counts; never ids)."""

    def __init__(self, name):
        self.name = name
        self.lines = []

    def add(self, key, value):
        self.lines.append(f"{key}: {value if not isinstance(value, str) else json.dumps(value)}")

    def text(self):
        return "\n".join([f"=== {self.name} ===", *self.lines, "=== end ==="]) + "\n"
