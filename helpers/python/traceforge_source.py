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

A call sent from an asyncio task with no application frame on its stack (a
library gathers coroutines: LangChain's ``ainvoke``, pydantic-ai's
``Agent.run``) is attributed to the application line that created the task,
directly or through tasks created from it: importing this module wraps the
event loop's ``create_task`` to remember that line in the new task's context.

Loaded as a pytest plugin (``pytest -p traceforge_source``), a call with no
application frame at all (sent from a thread a library started) is
attributed to the running test: its file, the line of its ``def`` and its
name as pytest reports it (``TestBilling.test_total[eur]``).
"""

import asyncio.base_events
import asyncio.events
import contextvars
import functools
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


# The application line that created the running asyncio task (or the task
# that created it): (absolute path, line, function), set in each new task's
# context by the create_task wrapper below.
_task_creator = contextvars.ContextVar("traceforge_source_task_creator", default=None)


# The frame that runs an event loop callback (a task's step): what lies below
# it is whatever runs the loop (asyncio.run in a test), not what the task
# does; the task's own application line is its creator's.
_LOOP_CALLBACK = asyncio.events.Handle._run.__code__


def _app_frame(frame, skip=()):
    """(absolute path, line, function) of the first frame from frame outward
    outside libraries and the skip substrings, not looking past the event
    loop's callback runner; None when there is none."""
    while frame is not None:
        code = frame.f_code
        if code is _LOOP_CALLBACK:
            return None
        path = os.path.realpath(code.co_filename) if not code.co_filename.startswith("<") else code.co_filename
        if not _is_library(path) and not any(s in path for s in skip):
            return path, frame.f_lineno, getattr(code, "co_qualname", code.co_name)  # 3.11+: Agent.run
        frame = frame.f_back
    return None


def current_source(root=None, skip=()):
    """Returns (file, line, function) for a call made now, or None.

    The first stack frame outside libraries and the ``skip`` path substrings
    decides; when it lies outside ``root`` nothing is sent. With no such frame,
    the application line that created the running asyncio task is used, then
    the running pytest test (plugin loaded).
    """
    root = os.path.realpath(root or os.getcwd())
    src = _app_frame(sys._getframe(1), skip) or _task_creator.get()
    if src is not None:
        rel = _relative(src[0], root)
        return None if rel is None else (rel, src[1], src[2])
    test = _current_test
    if test is None:
        return None
    rel = _relative(os.path.realpath(test[0]), root)
    return None if rel is None else (rel, test[1], test[2])


def _wrap_create_task():
    """Wraps BaseEventLoop.create_task (every asyncio.create_task, gather,
    ensure_future and TaskGroup task goes through it) so that a new task's
    context remembers the application line creating it — or, created from a
    task without one on the stack, that task's creator. Never fails a task
    creation: on any error the task is created as it would have been."""
    orig = asyncio.base_events.BaseEventLoop.create_task
    if getattr(orig, "traceforge_source", False):
        return

    @functools.wraps(orig)
    def create_task(self, coro, *args, **kwargs):
        try:
            src = _app_frame(sys._getframe(1)) or _task_creator.get()
            if src is not None:
                given = kwargs.get("context")
                ctx = given.copy() if given is not None else contextvars.copy_context()
                ctx.run(_task_creator.set, src)
                kwargs["context"] = ctx
        except Exception:  # noqa: BLE001 - attribution must never break the application
            pass
        return orig(self, coro, *args, **kwargs)

    create_task.traceforge_source = True
    asyncio.base_events.BaseEventLoop.create_task = create_task


if sys.version_info >= (3, 11):  # create_task takes a context from 3.11 on
    _wrap_create_task()


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
