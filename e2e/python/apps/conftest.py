"""The Python end-to-end apps: pytest suites that call an LLM SDK the way an
application's tests do. They run only under the harness (../test_e2e.py), as
``traceforge record|verify -- python -m pytest -p traceforge_source apps/…``:
the SDKs read the base URLs and keys traceforge gives them."""

import os

import pytest

# litellm fetches its model price list from the network when imported unless
# told to use the copy it ships (replay runs offline).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from common import Transcript


@pytest.fixture
def transcript(request):
    t = Transcript(request.node.nodeid)
    yield t
    # Printed only when the test passed (pytest runs with -s): a failing test
    # shows no transcript, and the harness says so.
    if request.node.stash.get(_PASSED, False):
        print("\n" + t.text(), end="")


_PASSED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.stash[_PASSED] = report.passed
    return report
