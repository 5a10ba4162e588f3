"""Attribute LLM SDK calls for traceforge: the X-Traceforge-Source header.

    import httpx, traceforge_source
    from openai import OpenAI

    client = OpenAI(http_client=traceforge_source.install(httpx.Client()))

``install(client)`` adds a request event hook (to an ``httpx.Client`` or
``httpx.AsyncClient``, or the same classes of ``httpx2``, the fork that current
openai, anthropic and pydantic-ai releases send through) that sets
``X-Traceforge-Source: <file>:<line>:<function>`` from the first stack frame outside the standard library, installed packages
(``site-packages``, ``dist-packages``) and this module. ``file`` is relative to
the project root (default: the working directory), slash-separated; ``file`` and
``function`` are percent-encoded as UTF-8 (``%``, ``:``, space, control
characters and non-ASCII always). A frame outside the root sends no header.

Loaded as a pytest plugin (``pytest -p traceforge_source``), a call with no
application frame on its stack (sent from a thread or task a library started)
is attributed to the running test: its file, the line of its ``def`` and its
name as pytest reports it (``TestBilling.test_total[eur]``).
"""

import os
import sys
import sysconfig
from urllib.parse import quote

HEADER = "X-Traceforge-Source"

# Encoded always: '%', ':', space, control characters and non-ASCII (as UTF-8).
_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "%:")
_LIBRARY_DIRS = tuple(
    sorted(
        {
            os.path.realpath(p) + os.sep
            for key in ("stdlib", "platstdlib", "purelib", "platlib")
            if (p := sysconfig.get_paths().get(key))
        }
    )
)
_THIS_FILE = os.path.realpath(__file__)

# The running test, set by the pytest plugin hooks below: (path, line, name).
_current_test = None


def encode_field(field):
    """Percent-encodes one field (file or function) of the header value."""
    return quote(str(field), safe=_SAFE, encoding="utf-8")


def format_source(file, line, function):
    """The header value for a source: ``file:line:function``, fields encoded."""
    return f"{encode_field(file)}:{line}:{encode_field(function)}"


def _is_library(path):
    if path.startswith("<") or path == _THIS_FILE:  # <frozen ...>, <string>
        return True
    parts = path.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return True
    return path.startswith(_LIBRARY_DIRS)


def _relative(path, root):
    rel = os.path.relpath(path, root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


def current_source(root=None, skip=()):
    """Returns (file, line, function) for a call made now, or None.

    The first stack frame outside libraries and the ``skip`` path substrings
    decides; when it lies outside ``root`` nothing is sent. With no such frame,
    the running pytest test (plugin loaded) is used.
    """
    root = os.path.realpath(root or os.getcwd())
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        path = os.path.realpath(code.co_filename) if not code.co_filename.startswith("<") else code.co_filename
        if not _is_library(path) and not any(s in path for s in skip):
            rel = _relative(path, root)
            if rel is None:
                return None
            func = getattr(code, "co_qualname", code.co_name)  # 3.11+: Agent.run
            return rel, frame.f_lineno, func
        frame = frame.f_back
    test = _current_test
    if test is None:
        return None
    rel = _relative(os.path.realpath(test[0]), root)
    return None if rel is None else (rel, test[1], test[2])


def _set_header(request, root, skip):
    if HEADER in request.headers:
        return
    src = current_source(root, skip)
    if src is not None:
        request.headers[HEADER] = format_source(*src)


def _client_classes():
    """(sync classes, async classes) of the HTTP client packages installed: httpx
    and httpx2 (the fork under its own import name that openai, anthropic and
    pydantic-ai send through since 2026; its classes are not httpx's)."""
    sync, asyn = [], []
    for name in ("httpx", "httpx2"):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        sync.append(mod.Client)
        asyn.append(mod.AsyncClient)
    return tuple(sync), tuple(asyn)


def install(client, root=None, skip=()):
    """Adds the source hook to an httpx or httpx2 Client or AsyncClient; returns the client.

    ``root``: the project root files are made relative to (default: the working
    directory when the request is sent). ``skip``: path substrings never to
    attribute (a wrapper module of your own). Installing twice is harmless.
    """
    sync_classes, async_classes = _client_classes()
    if async_classes and isinstance(client, async_classes):

        async def hook(request):
            _set_header(request, root, skip)

    elif sync_classes and isinstance(client, sync_classes):

        def hook(request):
            _set_header(request, root, skip)

    else:
        raise TypeError(
            "traceforge_source.install: want an httpx or httpx2 Client or AsyncClient, "
            f"got {type(client).__name__}; pass the client you give the SDK (OpenAI(http_client=...))"
        )
    hook.traceforge_source = True
    hooks = client.event_hooks
    request_hooks = [h for h in hooks.get("request", []) if not getattr(h, "traceforge_source", False)]
    hooks["request"] = [*request_hooks, hook]
    client.event_hooks = hooks
    return client


# ---- pytest plugin (pytest -p traceforge_source) --------------------------------


def pytest_runtest_setup(item):
    global _current_test
    path = str(getattr(item, "path", None) or item.fspath)
    _, lineno, domain = item.location
    line = (lineno if lineno is not None else 0) + 1
    _current_test = (path, line, domain or item.name)


def pytest_runtest_logfinish(nodeid, location):
    global _current_test
    _current_test = None
