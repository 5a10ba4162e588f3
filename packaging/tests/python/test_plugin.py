"""Run by packaging/tests/test_packages.py inside the clean venv it made:
traceforge from the built wheel, pytest and httpx from the offline
wheelhouse. pytest runs three times, as TRACEFORGE_PLUGIN says: "entry-point" (no -p flag: the
wheel's pytest11 entry point must load the plugin), "flag" (-p
traceforge_source, as the docs said before the wheel: loaded once, no
error) and "off" (-p no:traceforge_source: not loaded).
"""

import http.server
import os
import sys
import sysconfig
import threading

import httpx
import pytest
import traceforge_source

MODE = os.environ["TRACEFORGE_PLUGIN"]
EXPECT_PLUGIN = MODE != "off"


@pytest.fixture
def loopback():
    """A loopback HTTP server; yields its URL and the X-Traceforge-Source values it saw."""
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(self.headers.get("X-Traceforge-Source"))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions", seen
    server.shutdown()
    server.server_close()


def test_module_comes_from_the_wheel():
    site = os.path.realpath(sysconfig.get_paths()["purelib"])
    assert os.path.realpath(traceforge_source.__file__) == os.path.join(site, "traceforge_source.py")


def test_plugin_is_registered_by_the_entry_point(request):
    plugin = request.config.pluginmanager.get_plugin("traceforge_source")
    args = request.config.invocation_params.args
    dists = [d.project_name for p, d in request.config.pluginmanager.list_plugin_distinfo() if p is traceforge_source]
    if MODE == "entry-point":
        assert plugin is traceforge_source
        assert not any("traceforge_source" in a for a in args)
        assert dists == ["traceforge"]  # from the installed distribution's pytest11 entry point
    elif MODE == "flag":
        assert plugin is traceforge_source
        assert "traceforge_source" in args
        # pytest resolves -p NAME through the pytest11 entry point of that name:
        # the same registration, once, and no "already registered" error.
        assert dists == ["traceforge"]
    else:
        assert MODE == "off"
        assert plugin is None
        assert dists == []


def test_call_from_a_library_thread_is_attributed_to_the_test(loopback):
    url, seen = loopback
    client = traceforge_source.install(httpx.Client())
    # The thread's stack holds only threading, httpx and the hook: no
    # application frame, so only the plugin's running test can name a source.
    thread = threading.Thread(target=client.post, args=(url,), kwargs={"json": {"model": "m"}})
    thread.start()
    thread.join()
    client.close()
    this = test_call_from_a_library_thread_is_attributed_to_the_test
    want = f"test_plugin.py:{this.__code__.co_firstlineno}:{this.__name__}" if EXPECT_PLUGIN else None
    assert seen == [want]


def test_direct_call_is_attributed_to_its_line(loopback):
    url, seen = loopback
    with traceforge_source.install(httpx.Client()) as client:
        line = sys._getframe().f_lineno + 1
        client.post(url, json={"model": "m"})
    assert seen == [f"test_plugin.py:{line}:test_direct_call_is_attributed_to_its_line"]
