"""Python SDKs end to end: each app file under apps/ (a pytest suite calling
one SDK or library) is run as ``python -m pytest -p traceforge_source`` under

1. ``traceforge record`` against the deterministic fake upstream: exit 0, and
   every snapshot attributed by the helper to the test that made the call
   (its file, a line of that test marked ``# call``, its name);
2. ``traceforge verify`` (static checks): exit 0;
3. ``traceforge verify -- …`` with the fake upstream stopped and no API keys:
   exit 0, every test prints the transcript it printed when recording;
4. the same with ``TF_E2E_PROMPT_SUFFIX=" (changed)"``: exit 1, and a diff
   line with ``(changed)`` for every test.

One run of each step per app file (the SDK imports dominate the time), shared
by that file's cases: one test class per app, whose cases stay on one xdist
worker (``-n 2 --dist loadscope``). ``test_default`` makes the SDK's default
call (no temperature, no max tokens): the request defaults ``traceforge init``
writes into ``.traceforge.json`` make it recordable, and its snapshot must say
which (``defaults_applied``); the other cases set every field themselves, so
nothing is applied to them.
"""

import ast
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from conftest import HERE, REPO

HELPER_DIR = os.path.join(REPO, "helpers", "python")
TIMEOUT = 300
GEMINI_KEY = "AIzaSyE2E-python-0123456789abcdefghijkl"  # Gemini-shaped: must never be stored or printed


@dataclass
class App:
    file: str  # relative to e2e/python, the project root the helper attributes to
    provider: str  # the snapshot folder its calls land in
    endpoints: tuple  # the endpoints its snapshots may record
    # Cases whose calls the library sends from an asyncio task it starts
    # (asyncio.gather, a task group): no application frame is on that task's
    # stack, so the pytest plugin names the running test — its def line.
    task_cases: tuple = ()


APPS = {
    "openai": App("apps/test_openai_sdk.py", "openai", ("/v1/chat/completions",)),
    "anthropic": App("apps/test_anthropic_sdk.py", "anthropic", ("/v1/messages",)),
    "genai": App(
        "apps/test_genai_sdk.py",
        "gemini",
        ("/v1beta/models/gemini-2.5-flash:generateContent", "/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
    ),
    # Agent.run drives its graph in tasks of its own (run_sync and run_stream do not).
    "pydantic_ai": App(
        "apps/test_pydantic_ai.py", "openai", ("/v1/chat/completions",), task_cases=("test_plain_async", "test_tool_async")
    ),
    # ainvoke sends through asyncio.gather (astream does not).
    "langchain_openai": App(
        "apps/test_langchain_openai.py", "openai", ("/v1/chat/completions",), task_cases=("test_plain_async", "test_tool_async")
    ),
    "litellm": App("apps/test_litellm.py", "openai", ("/v1/chat/completions",)),
}

# Each app's tests and how many LLM calls (snapshots) each makes.
CASES = {
    "test_plain": 1,
    "test_plain_async": 1,
    "test_stream": 1,
    "test_stream_async": 1,
    "test_tool": 2,
    "test_tool_async": 2,
    # The SDK's default call: recorded through init's request defaults.
    "test_default": 1,
}
DEFAULT_CASE = "test_default"


# ---- processes ------------------------------------------------------------


@dataclass
class Result:
    argv: list
    code: int
    stdout: str
    stderr: str

    @property
    def combined(self):
        return self.stdout + self.stderr

    def __str__(self):
        return f"$ {' '.join(self.argv)}\nexit {self.code}\n--- stdout ---\n{self.stdout}--- stderr ---\n{self.stderr}"


def base_env():
    """This environment without anything that points an SDK or traceforge
    elsewhere, changes a prompt, or configures pytest."""
    drop = ("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "OLLAMA_", "TRACEFORGE_", "TF_E2E_", "LITELLM_", "PYTEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and k != "PYTHONPATH"}
    env["PYTHONPATH"] = HELPER_DIR  # traceforge_source, the module under test
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the source tree
    return env


def run(argv, env):
    try:
        p = subprocess.run(argv, cwd=HERE, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(argv)}: no exit within {TIMEOUT}s\n{e.stdout}{e.stderr}", pytrace=False)
    return Result(argv, p.returncode, p.stdout, p.stderr)


class FakeUpstream:
    """A running tf-fake-upstream on 127.0.0.1."""

    def __init__(self, binary):
        self.proc = subprocess.Popen([binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=base_env())
        line = self.proc.stdout.readline().strip()
        if not line.startswith("FAKE_UPSTREAM_URL=http://127.0.0.1:"):
            self.stop()
            pytest.fail(f"tf-fake-upstream: first line {line!r}, want FAKE_UPSTREAM_URL=http://127.0.0.1:PORT", pytrace=False)
        self.url = line.split("=", 1)[1]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


# ---- one app file through record → verify → replay → drift ----------------


@dataclass
class Run:
    app: App
    dir: str
    init: Result = None
    record: Result = None
    static: Result = None
    replay: Result = None
    drift: Result = None
    snapshots: list = field(default_factory=list)  # (file name, record)


def scenario(binaries, tmp_path, app):
    """Runs app's tests through the four steps; a step runs only when the ones
    before it succeeded."""
    traceforge, fake_bin = binaries
    r = Run(app, str(tmp_path / ".ai-snapshots"))
    tf = [traceforge, "--dir", r.dir]
    app_cmd = [sys.executable, "-m", "pytest", "-p", "traceforge_source", "-s", "--tb=short", app.file]

    # The project as a team sets it up: `traceforge init` writes .traceforge.json
    # with the request defaults that make the SDKs' default calls recordable.
    r.init = run(tf + ["init"], base_env())
    if r.init.code != 0:
        return r
    fake = FakeUpstream(fake_bin)
    try:
        env = base_env() | {"OPENAI_API_KEY": "e2e-openai-key", "ANTHROPIC_API_KEY": "e2e-anthropic-key", "GEMINI_API_KEY": GEMINI_KEY}
        upstreams = ["--openai-upstream", fake.url + "/v1", "--anthropic-upstream", fake.url, "--gemini-upstream", fake.url]
        r.record = run(tf + ["record", *upstreams, "--"] + app_cmd, env)
    finally:
        fake.stop()  # replay runs with the upstream gone: any call to it fails
    r.snapshots = read_snapshots(r.dir, app.provider)
    if r.record.code != 0:
        return r
    r.static = run(tf + ["verify"], base_env())
    if r.static.code != 0:
        return r
    r.replay = run(tf + ["verify", "--"] + app_cmd, base_env())  # no keys: replay needs none
    r.drift = run(tf + ["verify", "--"] + app_cmd, base_env() | {"TF_E2E_PROMPT_SUFFIX": " (changed)"})
    return r


def read_snapshots(folder, provider):
    out = []
    pdir = os.path.join(folder, provider)
    for name in sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []:
        if name.endswith(".json"):
            with open(os.path.join(pdir, name), encoding="utf-8") as f:
                doc = json.load(f)
            assert len(doc["snapshots"]) == 1, f"{name}: {len(doc['snapshots'])} records, want 1"
            out.append((name, doc["snapshots"][0]))
    return out


_runs = {}


@pytest.fixture
def app_run(request, binaries, tmp_path_factory):
    """The scenario of the test class's app, run once per pytest process and
    shared by the class's cases (--dist loadscope keeps a class on one
    worker)."""
    sdk = request.cls.sdk
    if sdk not in _runs:
        _runs[sdk] = scenario(binaries, tmp_path_factory.mktemp(sdk), APPS[sdk])
    return _runs[sdk]


# ---- checks ---------------------------------------------------------------


def transcripts(output):
    """Test node id → the framed transcript the app printed."""
    return {m.group(1): m.group(0) for m in re.finditer(r"^=== (\S+) ===\n.*?^=== end ===\n", output, re.M | re.S)}


def call_lines(path, func):
    """(def line, lines marked '# call') of the top-level function func in path."""
    with open(os.path.join(HERE, path), encoding="utf-8") as f:
        src = f.read()
    lines = src.splitlines()
    for node in ast.parse(src).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func:
            marked = {i for i in range(node.lineno, node.end_lineno + 1) if lines[i - 1].rstrip().endswith("# call")}
            return node.lineno, marked
    raise AssertionError(f"no function {func} in {path}")


def check_steps(r, case, calls):
    """Asserts the four steps for one test of the app."""
    app = r.app
    assert r.init.code == 0, f"traceforge init failed\n{r.init}"
    rec = r.record
    assert rec.code == 0, f"record: want exit 0\n{rec}"
    assert GEMINI_KEY not in rec.combined, "the Gemini key reached the output"

    # Attribution: every snapshot of this test names its file, a '# call' line
    # of the test (its def line when the library sent from its own task) and
    # the test's name.
    mine = [(n, s) for n, s in r.snapshots if s["source"]["function"] == case]
    assert len(mine) == calls, f"{len(mine)} snapshot(s) attributed to {case}, want {calls}: {[s['source'] for _, s in r.snapshots]}"
    def_line, marked = call_lines(app.file, case)
    if case in app.task_cases:
        marked = {def_line}
    for name, s in mine:
        src = s["source"]
        assert src["file"] == app.file, f"{name}: source.file {src['file']!r}, want {app.file!r}"
        want = "the def line" if case in app.task_cases else "a '# call' line"
        assert src["line"] in marked, f"{name}: source.line {src['line']}, want {want} of {case}: {sorted(marked)}"
        assert s["endpoint"] in app.endpoints, f"{name}: endpoint {s['endpoint']!r}, want one of {app.endpoints}"
        assert GEMINI_KEY not in json.dumps(s), f"{name}: the Gemini key is in the snapshot"
        applied = s.get("defaults_applied")
        if case == DEFAULT_CASE:
            assert applied, f"{name}: the default call's snapshot lists no defaults_applied"
        else:
            assert not applied, f"{name}: defaults {applied} applied to a call that sets its fields"

    assert r.static.code == 0, f"verify (static): want exit 0\n{r.static}"

    node = f"{os.path.basename(app.file)}::{case}"
    want = transcripts(rec.stdout).get(node)
    assert want, f"record: no transcript for {node}\n{rec}"
    assert r.replay.code == 0, f"verify -- (replay, upstream stopped, no keys): want exit 0\n{r.replay}"
    got = transcripts(r.replay.stdout).get(node)
    assert got == want, f"replayed transcript differs\n--- recorded ---\n{want}--- replayed ---\n{got}"

    # Drift: the changed prompt is a miss, reported with a diff, and the test
    # fails (no transcript).
    d = r.drift
    assert d.code == 1, f"verify with a changed prompt: want exit 1\n{d}"
    assert node not in transcripts(d.stdout), f"{node} passed with a changed prompt\n{d}"
    mark = f"{app.file}:"
    diff_lines = [l for l in d.combined.splitlines() if re.match(r"\s*[-+](?![-+]{2})", l) and "(changed)" in l]
    assert diff_lines, f"verify with a changed prompt: no diff line with (changed)\n{d}"
    assert re.search(rf"from {re.escape(mark)}\d+:{case}\b", d.combined), f"the drift report names no miss from {case}\n{d}"


class SDKCases:
    """The cases of one app; a subclass per app sets sdk."""

    sdk = None

    @pytest.mark.parametrize("case", list(CASES))
    def test_case(self, case, app_run):
        check_steps(app_run, case, CASES[case])


# litellm first: the slowest app starts first on the two workers.
class TestLitellm(SDKCases):
    sdk = "litellm"


class TestOpenAI(SDKCases):
    sdk = "openai"


class TestAnthropic(SDKCases):
    sdk = "anthropic"


class TestGenai(SDKCases):
    sdk = "genai"


class TestPydanticAI(SDKCases):
    sdk = "pydantic_ai"


class TestLangchainOpenAI(SDKCases):
    sdk = "langchain_openai"
