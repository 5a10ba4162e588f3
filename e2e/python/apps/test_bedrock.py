"""boto3 bedrock-runtime: converse (plain), converse_stream (the whole event
stream read), a get_weather toolUse → toolResult round trip, invoke_model
and invoke_model_with_response_stream with Claude's Messages body
(anthropic_version bedrock-2023-05-31), plus the SDK's default call (no
inferenceConfig). boto3 is synchronous: no async twins.

The client is boto3.client("bedrock-runtime") as real code writes it:
botocore reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME (traceforge's address) and
its credentials and region from the default chain, and signs every request
with SigV4 for traceforge's host. When recording, the harness gives the app
its own dummy credentials (traceforge signs again for the upstream with its
own); in replay it gives none and traceforge sets dummy ones.
Attribution: common.attribute_botocore (a before-sign hook)."""

import base64
import json

import boto3

from common import BEDROCK_MODEL, MAX_TOKENS, TOOL_DESCRIPTION, TOOL_NAME, TOOL_SCHEMA, attribute_botocore, canonical, prompt, run_tool

INFERENCE = {"temperature": 0, "maxTokens": MAX_TOKENS}
TOOLS = {"tools": [{"toolSpec": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "inputSchema": {"json": TOOL_SCHEMA}}}]}


def client():
    return attribute_botocore(boto3.client("bedrock-runtime"))


def user(mode):
    return [{"role": "user", "content": [{"text": prompt(mode)}]}]


def describe(transcript, prefix, resp):
    """Adds a Converse answer's text, tool uses, stop reason and token count;
    returns its message and its toolUse blocks."""
    message = resp["output"]["message"]
    text = "".join(b["text"] for b in message["content"] if "text" in b)
    uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
    for u in uses:
        transcript.add(f"{prefix}tool_use", f"{u['name']} {canonical(u['input'])}")
    transcript.add(f"{prefix}text", text)
    transcript.add(f"{prefix}stop_reason", resp["stopReason"])
    transcript.add(f"{prefix}tokens", resp["usage"]["totalTokens"])
    return message, uses


def test_plain(transcript):
    resp = client().converse(modelId=BEDROCK_MODEL, messages=user("plain"), inferenceConfig=INFERENCE)  # call
    describe(transcript, "", resp)
    assert resp["stopReason"] == "end_turn"


def test_stream(transcript):
    resp = client().converse_stream(modelId=BEDROCK_MODEL, messages=user("stream"), inferenceConfig=INFERENCE)  # call
    types, text, stop, tokens = [], "", None, None
    for event in resp["stream"]:  # every event, to the end of the stream
        (kind,) = event.keys()
        if not types or types[-1] != kind:
            types.append(kind)  # runs collapsed: replay may re-chunk the deltas
        if kind == "contentBlockDelta":
            text += event[kind]["delta"].get("text", "")
        elif kind == "messageStop":
            stop = event[kind]["stopReason"]
        elif kind == "metadata":
            tokens = event[kind]["usage"]["totalTokens"]
    transcript.add("events", " ".join(types))
    transcript.add("streamed text", text)
    transcript.add("stop_reason", stop)
    transcript.add("tokens", tokens)
    assert text and stop == "end_turn" and types[0] == "messageStart" and types[-1] == "metadata"


def test_tool(transcript):
    c = client()
    messages = user("tool")
    for turn in range(1, 4):
        resp = c.converse(modelId=BEDROCK_MODEL, messages=messages, inferenceConfig=INFERENCE, toolConfig=TOOLS)  # call
        message, uses = describe(transcript, f"turn {turn}: ", resp)
        if not uses:
            break
        results = [
            {"toolResult": {"toolUseId": u["toolUseId"], "content": [{"json": json.loads(run_tool(u["name"], u["input"]))}]}}
            for u in uses
        ]
        messages += [message, {"role": "user", "content": results}]
    assert turn == 2, "want a toolUse, then an answer"


def claude_body(mode):
    return json.dumps(
        {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": MAX_TOKENS,
            "temperature": 0,
            "messages": [{"role": "user", "content": prompt(mode)}],
        }
    )


def test_invoke(transcript):
    # invoke_model with Claude's Messages body: the answer is Claude's message.
    resp = client().invoke_model(modelId=BEDROCK_MODEL, body=claude_body("plain"), contentType="application/json", accept="application/json")  # call
    msg = json.loads(resp["body"].read())
    text = "".join(b["text"] for b in msg["content"] if b["type"] == "text")
    transcript.add("content", text)
    transcript.add("stop_reason", msg["stop_reason"])
    transcript.add("tokens", msg["usage"]["input_tokens"] + msg["usage"]["output_tokens"])
    assert text and msg["stop_reason"] == "end_turn"


def test_invoke_stream(transcript):
    # The stream's chunk frames each carry one of Claude's stream events.
    resp = client().invoke_model_with_response_stream(modelId=BEDROCK_MODEL, body=claude_body("stream"), contentType="application/json")  # call
    types, text, stop = [], "", None
    for event in resp["body"]:
        data = event["chunk"]["bytes"]
        ev = json.loads(data if isinstance(data, (bytes, bytearray)) else base64.b64decode(data))
        if not types or types[-1] != ev["type"]:
            types.append(ev["type"])
        if ev["type"] == "content_block_delta" and ev["delta"]["type"] == "text_delta":
            text += ev["delta"]["text"]
        elif ev["type"] == "message_delta":
            stop = ev["delta"]["stop_reason"]
    transcript.add("events", " ".join(types))
    transcript.add("content", text)
    transcript.add("stop_reason", stop)
    assert text and stop == "end_turn" and types[-1] == "message_stop"


def test_default(transcript):
    # What real code sends: no inferenceConfig at all.
    resp = client().converse(modelId=BEDROCK_MODEL, messages=user("default"))  # call
    describe(transcript, "", resp)
    assert resp["output"]["message"]["content"]
