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

The cloud apps (boto3's bedrock-runtime, anthropic's AnthropicVertex) go
through the same steps with their providers' credentials, as the Go suite's
TestBedrockClient and TestCloudClients do: none of them (keys, secrets,
session token, SigV4 signatures, the Vertex bearer token) reaches the output
or the snapshot folder; the fake Bedrock (fakebedrock/, internal/fakeupstream's,
which checks every SigV4 signature and accepts only traceforge's own
credentials) verified every recorded call and got none in replay; the fake
upstream received exactly the Vertex calls recorded. See CloudCases.

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
import urllib.request
from dataclasses import dataclass, field

import pytest

from conftest import HERE, REPO

HELPER_DIR = os.path.join(REPO, "helpers", "python")
TIMEOUT = 300
GEMINI_KEY = "AIzaSyE2E-python-0123456789abcdefghijkl"  # Gemini-shaped: must never be stored or printed

# The cloud apps' credentials (as e2e/bedrock_test.go and cloud_test.go).
# AWS: the application's (it signs for traceforge's host with them) and
# traceforge's own, the only ones the fake Bedrock accepts, for the region
# the client signs for (traceforge's AWS_REGION differs: the credential
# scope's region must win) — so every call that reaches it was signed again
# by traceforge.
AWS_APP = {
    "AWS_ACCESS_KEY_ID": "AKIDE2EAPPLICATION",
    "AWS_SECRET_ACCESS_KEY": "e2e-application-secret",
    "AWS_SESSION_TOKEN": "e2e-app-session",
    # botocore reads its region from AWS_DEFAULT_REGION (not AWS_REGION).
    "AWS_DEFAULT_REGION": "us-west-2",
}
AWS_TRACEFORGE = {"AWS_ACCESS_KEY_ID": "AKIDE2ETRACEFORGE", "AWS_SECRET_ACCESS_KEY": "e2e-traceforge-secret", "AWS_REGION": "eu-west-1"}
BEDROCK_REGION = "us-west-2"
# Vertex AI: a Google OAuth access token (ya29., a secret rule) while
# recording; replay uses the app's fixed "traceforge-replay".
VERTEX_TOKEN = "ya29.e2e" + "T" * 40


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


@dataclass
class App:
    file: str  # relative to e2e/python, the project root the helper attributes to
    provider: str  # the snapshot folder its calls land in
    endpoints: tuple  # the endpoints its snapshots may record
    # The app's tests and how many LLM calls (snapshots) each makes.
    cases: dict = None
    # Strings that must reach neither the output of any step nor the
    # snapshot folder (the cloud apps' credentials and signatures).
    secrets: tuple = ()
    # Recorded against the fake Bedrock, with the app's own AWS credentials.
    bedrock: bool = False

    def __post_init__(self):
        if self.cases is None:
            self.cases = CASES

    @property
    def calls(self):
        return sum(self.cases.values())


APPS = {
    "openai": App("apps/test_openai_sdk.py", "openai", ("/v1/chat/completions",)),
    "anthropic": App("apps/test_anthropic_sdk.py", "anthropic", ("/v1/messages",)),
    "genai": App(
        "apps/test_genai_sdk.py",
        "gemini",
        ("/v1beta/models/gemini-2.5-flash:generateContent", "/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
    ),
    # Agent.run drives its graph in tasks of its own, and ainvoke sends through
    # asyncio.gather: the helper attributes those tasks' calls to the line that
    # started them (traceforge_source wraps create_task).
    "pydantic_ai": App("apps/test_pydantic_ai.py", "openai", ("/v1/chat/completions",)),
    "langchain_openai": App("apps/test_langchain_openai.py", "openai", ("/v1/chat/completions",)),
    "litellm": App("apps/test_litellm.py", "openai", ("/v1/chat/completions",)),
    # boto3 is synchronous (no _async cases); its invoke cases send Claude's
    # Messages body to InvokeModel.
    "bedrock": App(
        "apps/test_bedrock.py",
        "bedrock",
        ("/model/anthropic.claude-3-haiku-20240307-v1:0/converse", "/model/anthropic.claude-3-haiku-20240307-v1:0/invoke"),
        cases={"test_plain": 1, "test_stream": 1, "test_tool": 2, "test_invoke": 1, "test_invoke_stream": 1, "test_default": 1},
        secrets=(
            *(env[k] for env in (AWS_APP, AWS_TRACEFORGE) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN") if k in env),
            "AWS4-HMAC-SHA256",  # a SigV4 Authorization header
            "Signature=",
        ),
        bedrock=True,
    ),
    "anthropic_vertex": App(
        "apps/test_anthropic_vertex.py",
        "vertex",
        ("/v1/projects/traceforge-e2e/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict",),
        secrets=(VERTEX_TOKEN,),
    ),
}


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
    elsewhere, gives them credentials, changes a prompt, or configures pytest."""
    drop = ("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "OLLAMA_", "AWS_", "TRACEFORGE_", "TF_E2E_", "LITELLM_", "PYTEST_")
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

    prefix = "FAKE_UPSTREAM_URL="

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=base_env())
        line = self.proc.stdout.readline().strip()
        self.stderr = ""
        if not line.startswith(self.prefix + "http://127.0.0.1:"):
            self.stop()
            pytest.fail(f"{argv[0]}: first line {line!r}, want {self.prefix}http://127.0.0.1:PORT\n{self.stderr}", pytrace=False)
        self.url = line.split("=", 1)[1]

    def stop(self):
        """Stops it (once); its stderr is then in self.stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.proc.stderr.closed:
            self.stderr = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()

    def requests(self):
        """After stop: how many requests it received (its last words)."""
        m = re.search(r"stopped after (\d+) requests", self.stderr)
        return int(m.group(1)) if m else None


class FakeBedrock(FakeUpstream):
    """A running fakebedrock (internal/fakeupstream's fake Bedrock runtime):
    only SigV4 signatures of AWS_TRACEFORGE's credentials for BEDROCK_REGION
    are accepted."""

    prefix = "FAKE_BEDROCK_URL="

    def __init__(self, binary):
        super().__init__(
            [
                binary,
                "-access-key-id",
                AWS_TRACEFORGE["AWS_ACCESS_KEY_ID"],
                "-secret-access-key",
                AWS_TRACEFORGE["AWS_SECRET_ACCESS_KEY"],
                "-region",
                BEDROCK_REGION,
            ]
        )

    def stats(self):
        """{"requests", "signed", "bearer"}: received, SigV4-verified, bearer."""
        with urllib.request.urlopen(self.url + "/__stats", timeout=10) as resp:
            return json.load(resp)


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
    # The cloud apps: what the fakes received (see CloudCases).
    upstream_requests: int = None  # tf-fake-upstream, over the whole run
    bedrock_after_record: dict = None  # the fake Bedrock's stats
    bedrock_after_replay: dict = None  # … after replay and drift
    bare_replay: Result = None  # Bedrock: replay with no AWS variable at all
    home: str = None  # the bare replay's empty HOME (no ~/.aws)


def scenario(binaries, tmp_path, app, fake_bedrock_bin=None):
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
    bedrock = FakeBedrock(fake_bedrock_bin) if app.bedrock else None
    try:
        fake = FakeUpstream([fake_bin])
        try:
            env = base_env() | {"OPENAI_API_KEY": "e2e-openai-key", "ANTHROPIC_API_KEY": "e2e-anthropic-key", "GEMINI_API_KEY": GEMINI_KEY}
            env |= {"TF_E2E_VERTEX_TOKEN": VERTEX_TOKEN}
            upstreams = ["--openai-upstream", fake.url + "/v1", "--anthropic-upstream", fake.url, "--gemini-upstream", fake.url]
            upstreams += ["--vertex-upstream", fake.url]
            record_cmd = app_cmd
            if bedrock:
                # traceforge holds its own AWS credentials; the app, started
                # through a script (no credential on a command line
                # traceforge prints), its own.
                # No shared files, no instance metadata endpoint.
                none = str(tmp_path / "none")
                env |= {"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "true"}
                env |= AWS_TRACEFORGE
                upstreams += ["--bedrock-upstream", bedrock.url]
                script = tmp_path / "app-aws.sh"
                script.write_text("#!/bin/sh\n" + " ".join(f"{k}={v}" for k, v in AWS_APP.items()) + ' exec "$@"\n')
                script.chmod(0o755)
                record_cmd = [str(script)] + app_cmd
            r.record = run(tf + ["record", *upstreams, "--"] + record_cmd, env)
            if bedrock:
                r.bedrock_after_record = bedrock.stats()
        finally:
            fake.stop()  # replay runs with the upstream gone: any call to it fails
            r.upstream_requests = fake.requests()
        r.snapshots = read_snapshots(r.dir, app.provider)
        if r.record.code != 0:
            return r
        r.static = run(tf + ["verify"], base_env())
        if r.static.code != 0:
            return r
        replay_env = base_env()  # no keys: replay needs none
        if bedrock:
            # The fake Bedrock stays up, named as the upstream, and must get
            # no call: replay answers from the snapshots alone.
            replay_env |= {"TRACEFORGE_BEDROCK_UPSTREAM": bedrock.url}
            r.home = str(tmp_path / "home")
            os.mkdir(r.home)
            r.bare_replay = run(tf + ["verify", "--"] + app_cmd, replay_env | {"HOME": r.home})
        r.replay = run(tf + ["verify", "--"] + app_cmd, replay_env)
        r.drift = run(tf + ["verify", "--"] + app_cmd, replay_env | {"TF_E2E_PROMPT_SUFFIX": " (changed)"})
        if bedrock:
            r.bedrock_after_replay = bedrock.stats()
    finally:
        if bedrock:
            bedrock.stop()
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
        app = APPS[sdk]
        fake_bedrock = request.getfixturevalue("fake_bedrock_binary") if app.bedrock else None
        _runs[sdk] = scenario(binaries, tmp_path_factory.mktemp(sdk), app, fake_bedrock)
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
    # of the test (also when the library sent from a task of its own) and the
    # test's name.
    mine = [(n, s) for n, s in r.snapshots if s["source"]["function"] == case]
    assert len(mine) == calls, f"{len(mine)} snapshot(s) attributed to {case}, want {calls}: {[s['source'] for _, s in r.snapshots]}"
    _, marked = call_lines(app.file, case)
    for name, s in mine:
        src = s["source"]
        assert src["file"] == app.file, f"{name}: source.file {src['file']!r}, want {app.file!r}"
        assert src["line"] in marked, f"{name}: source.line {src['line']}, want a '# call' line of {case}: {sorted(marked)}"
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
    assert r.replay.code == 0, f"verify -- (replay offline, no keys): want exit 0\n{r.replay}"
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


def folder_files(folder):
    """(path, text) of every file under folder."""
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                yield path, f.read()


def pytest_generate_tests(metafunc):
    """Each app class's test_case runs once per case of its app."""
    if "case" in metafunc.fixturenames and getattr(metafunc.cls, "sdk", None):
        metafunc.parametrize("case", list(APPS[metafunc.cls.sdk].cases))


class SDKCases:
    """The cases of one app; a subclass per app sets sdk."""

    sdk = None

    def test_case(self, case, app_run):
        check_steps(app_run, case, app_run.app.cases[case])


class CloudCases(SDKCases):
    """A cloud provider's app: besides its cases, what e2e/bedrock_test.go
    and cloud_test.go check — credentials and signatures stay out of the
    output and the snapshot folder, and the upstream received exactly the
    recorded calls."""

    def test_no_credential_stored_or_printed(self, app_run):
        r = app_run
        assert r.record is not None and r.record.code == 0, f"record: want exit 0\n{r.record}"
        steps = {"init": r.init, "record": r.record, "verify": r.static, "bare replay": r.bare_replay, "replay": r.replay, "drift": r.drift}
        files = list(folder_files(r.dir))
        assert any(p.endswith(".json") and os.sep + r.app.provider + os.sep in p for p, _ in files), f"no snapshot in {r.dir}"
        for secret in r.app.secrets:
            for name, step in steps.items():
                assert step is None or secret not in step.combined, f"{secret!r} reached the output of {name}"
            for path, text in files:
                assert secret not in text, f"{secret!r} is in {os.path.relpath(path, r.dir)}"

    def test_upstream_calls(self, app_run):
        r = app_run
        assert r.record is not None and r.record.code == 0, f"record: want exit 0\n{r.record}"
        assert len(r.snapshots) == r.app.calls, f"{len(r.snapshots)} snapshot(s) in {r.app.provider}/, want {r.app.calls}"
        if r.app.bedrock:
            # The app signed with its own credentials, which the fake refuses:
            # each call it accepted was signed again by traceforge.
            got = r.bedrock_after_record
            want = {"requests": r.app.calls, "signed": r.app.calls, "bearer": 0}
            assert got == want, f"the fake Bedrock after record: {got}, want {want} (every request re-signed by traceforge and verified)"
            assert r.upstream_requests == 0, f"tf-fake-upstream got {r.upstream_requests} request(s), want 0"
            assert r.bedrock_after_replay == got, f"replay and drift reached the upstream: {got} after record, {r.bedrock_after_replay} after"
        else:
            # It ran for record only: replay ran with it stopped.
            assert r.upstream_requests == r.app.calls, f"tf-fake-upstream got {r.upstream_requests} request(s), want {r.app.calls}"


# The classes go to the two workers in this order (pytest.ini:
# --no-loadscope-reorder): litellm, the slowest app, first; the light boto3
# app last.
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


class TestAnthropicVertex(CloudCases):
    sdk = "anthropic_vertex"


class TestBedrock(CloudCases):
    sdk = "bedrock"

    def test_replay_without_aws_variables(self, app_run):
        """Replay with no AWS variable in the environment (and a HOME with no
        ~/.aws): traceforge gives COMMAND dummy credentials and a region
        (docs/providers.md, "Replay with no network"), so boto3 needs
        nothing — every test passes with its recorded transcript.

        botocore reads its region only from AWS_DEFAULT_REGION, which replay
        sets beside AWS_REGION (it once did not: NoRegionError before the
        first call)."""
        r = app_run
        assert r.bare_replay is not None, f"no bare replay: record or static verify failed\n{r.record}\n{r.static}"
        b = r.bare_replay
        assert b.code == 0, f"verify -- with no AWS variable: want exit 0\n{b}"
        want, got = transcripts(r.record.stdout), transcripts(b.stdout)
        assert got == want, f"replayed transcripts differ\n--- recorded ---\n{want}\n--- replayed ---\n{got}"
