"""The Python end-to-end harness (test_e2e.py): builds traceforge and the fake
upstream once per pytest process (and the fake Bedrock, fakebedrock/, when a
Bedrock app runs). The apps under apps/ are not collected
here: the harness runs them under traceforge."""

import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

collect_ignore = ["apps"]


@pytest.fixture(scope="session")
def binaries(tmp_path_factory):
    """(traceforge, tf-fake-upstream): from the folder TF_E2E_BIN names (make
    passes bin/, which it has just built), else built from this checkout."""
    prebuilt = os.environ.get("TF_E2E_BIN")
    if prebuilt:
        paths = tuple(os.path.join(os.path.abspath(prebuilt), n) for n in ("traceforge", "tf-fake-upstream"))
        for p in paths:
            if not os.access(p, os.X_OK):
                pytest.fail(f"TF_E2E_BIN={prebuilt}: no executable {p}", pytrace=False)
        return paths
    out = tmp_path_factory.mktemp("bin")
    built = []
    for name in ("traceforge", "tf-fake-upstream"):
        path = str(out / name)
        proc = subprocess.run(
            ["go", "build", "-o", path, "./cmd/" + name], cwd=REPO, capture_output=True, text=True, timeout=600
        )
        if proc.returncode != 0:
            pytest.fail(f"go build ./cmd/{name}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}", pytrace=False)
        built.append(path)
    return tuple(built)


@pytest.fixture(scope="session")
def fake_bedrock_binary(tmp_path_factory):
    """fakebedrock/ (internal/fakeupstream's fake Bedrock runtime, which
    tf-fake-upstream does not serve), built from the e2e module: a few
    seconds the first time, then Go's build cache."""
    path = str(tmp_path_factory.mktemp("fakebedrock") / "fakebedrock")
    proc = subprocess.run(
        ["go", "build", "-o", path, "./python/fakebedrock"],
        cwd=os.path.join(REPO, "e2e"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        pytest.fail(f"go build ./python/fakebedrock: exit {proc.returncode}\n{proc.stdout}{proc.stderr}", pytrace=False)
    return path
