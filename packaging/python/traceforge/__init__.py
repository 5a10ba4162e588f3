"""traceforge, installed from PyPI: the CLI binary and its Python helpers.

The wheel installs the static ``traceforge`` binary into the environment's
scripts directory (``bin/``), so ``traceforge`` is on PATH in an activated
venv; ``python -m traceforge`` runs the same binary. The attribution helper is
the top-level module ``traceforge_source`` (``pytest`` loads it as a plugin).
"""

import os
import shutil
import sys
import sysconfig

__all__ = ["binary_path"]

_EXE = "traceforge" + (sysconfig.get_config_var("EXE") or "")


def _from_record():
    # The installer's RECORD lists where it put the script, whatever the
    # scheme (venv, --user, --prefix, --target).
    try:
        from importlib.metadata import PackageNotFoundError, distribution
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        files = distribution("traceforge").files or ()
    except PackageNotFoundError:
        return None
    for f in files:
        if f.name == _EXE and f.parent.name in ("bin", "Scripts"):
            path = str(f.locate())
            if os.path.isfile(path):
                return os.path.realpath(path)
    return None


def binary_path():
    """The path of the installed traceforge binary; FileNotFoundError if there is none."""
    path = _from_record()
    if path:
        return path
    candidates = [os.path.join(sysconfig.get_path("scripts"), _EXE)]
    if sys.version_info >= (3, 10):
        user = sysconfig.get_preferred_scheme("user")
    else:  # pragma: no cover
        user = "nt_user" if os.name == "nt" else "posix_user"
    candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user), _EXE))
    for path in candidates:
        if os.path.isfile(path):
            return path
    found = shutil.which(_EXE)
    if found:
        return found
    raise FileNotFoundError(
        "traceforge: the traceforge binary of this package was not found in the environment's "
        f"scripts directory ({candidates[0]}) nor on PATH; reinstall with `pip install --force-reinstall traceforge`"
    )
