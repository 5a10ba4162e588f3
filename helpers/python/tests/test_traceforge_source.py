"""Tests of traceforge_source with httpx's MockTransport (no network)."""

import asyncio
import os
import sys
import textwrap

import httpx
import pytest

import traceforge_source

HERE = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)  # helpers/python
FILE = "tests/test_traceforge_source.py"


def marker_line(name, path=__file__):
    """The 1-based line of path that ends with '# mark:<name>'."""
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# mark:{name}"):
                return i
    raise AssertionError(f"no line marked {name}")


def echo(request):
    return httpx.Response(200, text=request.headers.get(traceforge_source.HEADER, "<none>"))


# A library living in site-packages that sends from a thread it starts: no
# application frame is on that thread's stack.
FAKELIB = textwrap.dedent(
    """
    import threading

    def in_thread(client, url):
        out = []
        t = threading.Thread(target=lambda: out.append(client.get(url).text))
        t.start()
        t.join()
        return out[0]
    """
)


@pytest.fixture
def fakelib(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "tf_fakelib.py").write_text(FAKELIB)
    monkeypatch.syspath_prepend(str(site))
    import tf_fakelib

    yield tf_fakelib
    sys.modules.pop("tf_fakelib", None)


def test_encode_field():
    assert traceforge_source.encode_field("src/app.py") == "src/app.py"
    assert traceforge_source.encode_field("a:b%c d") == "a%3Ab%25c%20d"
    assert traceforge_source.encode_field("café\n\x7f") == "caf%C3%A9%0A%7F"
    assert traceforge_source.encode_field("<module>") == "<module>"
    assert traceforge_source.format_source("my app/café.py", 3, "Billing::charge") == (
        "my%20app/caf%C3%A9.py:3:Billing%3A%3Acharge"
    )


def test_sync_client_attributes_the_caller():
    client = traceforge_source.install(httpx.Client(transport=httpx.MockTransport(echo)), root=ROOT)

    def summarize():
        return client.post("http://llm.test/v1/chat/completions", json={}).text  # mark:sync

    assert summarize() == f"{FILE}:{marker_line('sync')}:test_sync_client_attributes_the_caller.<locals>.summarize"


class Agent:
    def __init__(self, client):
        self.client = client

    async def run(self):
        resp = await self.client.post("http://llm.test/v1/messages", json={})  # mark:async
        return resp.text


def test_async_client_attributes_the_awaiting_method():
    async def main():
        async with traceforge_source.install(httpx.AsyncClient(transport=httpx.MockTransport(echo)), root=ROOT) as c:
            return await Agent(c).run()

    assert asyncio.run(main()) == f"{FILE}:{marker_line('async')}:Agent.run"


def test_existing_header_is_kept_and_install_is_idempotent():
    client = httpx.Client(transport=httpx.MockTransport(echo))
    traceforge_source.install(client, root=ROOT)
    traceforge_source.install(client, root=ROOT)
    assert len(client.event_hooks["request"]) == 1
    resp = client.get("http://llm.test/", headers={traceforge_source.HEADER: "src/app.py:12:summarize"})
    assert resp.text == "src/app.py:12:summarize"


def test_outside_root_sends_nothing_and_skip_passes_over_files(tmp_path):
    client = traceforge_source.install(httpx.Client(transport=httpx.MockTransport(echo)), root=str(tmp_path))
    assert client.get("http://llm.test/").text == "<none>"
    skipping = traceforge_source.install(
        httpx.Client(transport=httpx.MockTransport(echo)), root=ROOT, skip=("test_traceforge_source",)
    )
    assert skipping.get("http://llm.test/").text == "<none>"  # no other application frame


def test_install_rejects_other_clients():
    with pytest.raises(TypeError, match="want an httpx or httpx2 Client or AsyncClient, got dict"):
        traceforge_source.install({})


def test_install_takes_httpx2_clients(monkeypatch):
    # httpx2 (what openai, anthropic and pydantic-ai send through now) is a fork
    # of httpx under its own name: its clients are not httpx's. A stand-in
    # module with httpx's classes subclassed checks the dispatch; the
    # end-to-end suite (e2e/python) runs the real package.
    import types

    fake = types.ModuleType("httpx2")
    fake.Client = type("Client", (httpx.Client,), {})
    fake.AsyncClient = type("AsyncClient", (httpx.AsyncClient,), {})
    monkeypatch.setitem(sys.modules, "httpx2", fake)
    sync = traceforge_source.install(fake.Client(transport=httpx.MockTransport(echo)), root=ROOT)
    assert sync.get("http://llm.test/").text == (  # mark:httpx2-sync
        f"{FILE}:{marker_line('httpx2-sync')}:test_install_takes_httpx2_clients"
    )
    asyn = traceforge_source.install(fake.AsyncClient(transport=httpx.MockTransport(echo)), root=ROOT)

    async def main():
        return (await asyn.get("http://llm.test/")).text  # mark:httpx2-async

    assert asyncio.run(main()) == f"{FILE}:{marker_line('httpx2-async')}:test_install_takes_httpx2_clients.<locals>.main"


def test_library_thread_without_plugin_sends_nothing(fakelib):
    # This session does not load the plugin: the thread has no application frame.
    assert traceforge_source._current_test is None
    client = traceforge_source.install(httpx.Client(transport=httpx.MockTransport(echo)), root=ROOT)
    assert fakelib.in_thread(client, "http://llm.test/") == "<none>"


def test_pytest_plugin_attributes_a_library_thread_to_the_running_test(pytester, fakelib, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([ROOT, os.path.dirname(fakelib.__file__)]))
    app = pytester.makepyfile(
        test_app=textwrap.dedent(
            """
            import httpx
            import tf_fakelib
            import traceforge_source


            def echo(request):
                return httpx.Response(200, text=request.headers.get("X-Traceforge-Source", "<none>"))


            class TestBilling:
                def test_total(self):  # mark:total
                    client = traceforge_source.install(httpx.Client(transport=httpx.MockTransport(echo)))
                    print("HEADER=" + tf_fakelib.in_thread(client, "http://llm.test/"))


            def test_direct():
                client = traceforge_source.install(httpx.Client(transport=httpx.MockTransport(echo)))
                print("HEADER=" + client.get("http://llm.test/").text)  # mark:direct
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "traceforge_source", "-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    headers = [line[line.index("HEADER=") :] for line in result.outlines if "HEADER=" in line]
    # The thread has no application frame: the running test (line of its def).
    assert f"HEADER=test_app.py:{marker_line('total', app)}:TestBilling.test_total" in headers, result.outlines
    # A direct call keeps its own line.
    assert f"HEADER=test_app.py:{marker_line('direct', app)}:test_direct" in headers, result.outlines


# A library in site-packages that sends from tasks it gathers (as LangChain's
# ainvoke and pydantic-ai's Agent.run do): no application frame is on those
# tasks' stacks, and one of them starts a task of its own.
FAKEASYNC = textwrap.dedent(
    """
    import asyncio

    async def _send(client, url):
        return (await client.get(url)).text

    async def _nested(client, url):
        return await asyncio.create_task(_send(client, url))

    async def gathered(client, url):
        a, b = await asyncio.gather(_send(client, url), _nested(client, url))
        return [a, b]
    """
)


@pytest.fixture
def fakeasync(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "tf_fakeasync.py").write_text(FAKEASYNC)
    monkeypatch.syspath_prepend(str(site))
    import tf_fakeasync

    yield tf_fakeasync
    sys.modules.pop("tf_fakeasync", None)


def test_library_tasks_are_attributed_to_the_line_that_started_them(fakeasync, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def app():
        client = traceforge_source.install(httpx.AsyncClient(transport=httpx.MockTransport(echo)))
        async with client:
            return await fakeasync.gathered(client, "http://x/y")  # mark:gathered

    got = asyncio.run(app())
    want = f"{FILE}:{marker_line('gathered')}:test_library_tasks_are_attributed_to_the_line_that_started_them.<locals>.app"
    assert got == [want, want]
