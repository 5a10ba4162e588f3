#!/usr/bin/env python3
"""make dist: the release artifacts of traceforge, into dist/ (docs/install.md).

    python3 packaging/dist.py --version VERSION [--go GO] [--ldflags FLAGS] [--out dist]

For each target (linux and darwin x amd64 and arm64; CGO_ENABLED=0 cross
compiles, so the binaries are static) it builds

- dist/traceforge_<version>_<os>_<arch>.tar.gz: the binary and README.md;
- dist/python/traceforge-<pyversion>-py3-none-<platform>.whl: the binary as
  a script, the traceforge package (python -m traceforge) and
  traceforge_source.py, copied from helpers/python now, with its pytest11
  entry point (built by hatchling through pip wheel, from packaging/python);
- dist/npm/traceforge-cli-<os>-<cpu>-<npmversion>.tgz: @traceforge/cli-<os>-<cpu>,
  the binary alone, with "os" and "cpu" set (npm pack);

then dist/npm/traceforge-<npmversion>.tgz (the launcher, the Node helper
copied from helpers/node/src, the platform packages as optionalDependencies)
and dist/checksums.txt (sha256sum format, paths relative to dist/).

Windows is not a target: internal/snapshot uses flock and O_NOFOLLOW, which
GOOS=windows does not have, so the binary does not compile there.

The Python tools (pip, hatchling) are installed, pinned with hashes from
packaging/requirements-build.txt, into build/packaging/venv the first time
(that needs PyPI); this script then re-runs itself with that venv's Python.
"""

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGING = os.path.join(ROOT, "packaging")
BUILD = os.path.join(ROOT, "build", "packaging")
VENV = os.path.join(BUILD, "venv")
VENV_PYTHON = os.path.join(VENV, "bin", "python")
BUILD_REQUIREMENTS = os.path.join(PACKAGING, "requirements-build.txt")

# (GOOS, GOARCH, Node's process.platform, Node's process.arch, wheel platform tag)
# The Linux binary is static (no libc at all), so one wheel serves glibc
# (manylinux 2.17, i.e. manylinux2014) and musl (musllinux 1.1) alike. Go
# 1.25+ needs macOS 12 Monterey.
TARGETS = [
    ("linux", "amd64", "linux", "x64", "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64"),
    ("linux", "arm64", "linux", "arm64", "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64"),
    ("darwin", "amd64", "darwin", "x64", "macosx_12_0_x86_64"),
    ("darwin", "arm64", "darwin", "arm64", "macosx_12_0_arm64"),
]

_DESCRIBE = re.compile(
    r"(?:v?(?P<core>\d+\.\d+\.\d+)(?:-(?!dirty\Z)(?P<pre>[0-9A-Za-z.]+))?(?:-(?P<distance>\d+)-g(?P<hash>[0-9a-f]+))?"
    r"|(?P<bare>[0-9a-f]{4,40})|devel)(?P<dirty>-dirty)?"
)
_PRE = re.compile(r"(?P<kind>a|alpha|b|beta|rc)\.?(?P<n>\d+)")


class VersionError(ValueError):
    pass


def package_versions(version):
    """(Python version, npm version) of a Makefile VERSION (git describe --tags --always --dirty).

    A release tag vX.Y.Z[-PRE] (PRE: a, alpha, b, beta or rc and a number)
    gives X.Y.Z[PRE] on PyPI and X.Y.Z[-PRE] on npm. Anything else (N commits
    after a tag, an untagged commit, a dirty tree, "devel") is a development
    build that sorts after the tag and before the next release, as
    setuptools-scm numbers them: X.Y.(Z+1).devN+gHASH[.dirty] and
    X.Y.(Z+1)-dev.N.gHASH[.dirty]; after a prerelease X.Y.ZPRE.postN.dev0+...
    and X.Y.Z-PRE.dev.N....; 0.0.0.dev0+gHASH and 0.0.0-dev.0.gHASH untagged.
    """
    m = _DESCRIBE.fullmatch(version)
    if not m:
        raise VersionError(f"VERSION {version!r} is neither vX.Y.Z[-PRE] nor git describe --tags --always --dirty output")
    core = m["core"] or "0.0.0"
    py_pre = npm_pre = ""
    if m["pre"]:
        p = _PRE.fullmatch(m["pre"])
        if not p:
            raise VersionError(f"VERSION {version!r}: prerelease {m['pre']!r} is not a, alpha, b, beta or rc with a number")
        kind = {"alpha": "a", "beta": "b"}.get(p["kind"], p["kind"])
        py_pre, npm_pre = f"{kind}{p['n']}", m["pre"]
    commit = m["hash"] or m["bare"]
    dev = m["distance"] is not None or m["dirty"] or commit or not m["core"]
    if not dev:
        return core + py_pre, core + (f"-{npm_pre}" if npm_pre else "")
    distance = m["distance"] or "0"
    local = [f"g{commit}"] if commit else []
    if m["dirty"]:
        local.append("dirty")
    local_py = "+" + ".".join(local) if local else ""
    if npm_pre:  # after vX.Y.Z-rcN: above it, below the next prerelease, on both
        return (f"{core}{py_pre}.post{distance}.dev0{local_py}",
                f"{core}-" + ".".join([npm_pre, "dev", distance] + local))
    if m["core"]:  # after vX.Y.Z: a development build of X.Y.(Z+1)
        major, minor, patch = core.split(".")
        core = f"{major}.{minor}.{int(patch) + 1}"
    return f"{core}.dev{distance}{local_py}", f"{core}-" + ".".join(["dev", distance] + local)


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def ensure_venv():
    """Creates build/packaging/venv with the pinned tools unless it has them already."""
    want = sha256(BUILD_REQUIREMENTS)
    stamp = os.path.join(VENV, ".requirements.sha256")
    if os.path.exists(stamp) and open(stamp).read().strip() == want and os.path.exists(VENV_PYTHON):
        return
    shutil.rmtree(VENV, ignore_errors=True)
    run([sys.executable, "-m", "venv", VENV])
    run([VENV_PYTHON, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--require-hashes",
         "--only-binary", ":all:", "-r", BUILD_REQUIREMENTS])
    with open(stamp, "w") as f:
        f.write(want + "\n")


def source_date_epoch():
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
        return int(out)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return 315532800  # 1980-01-01, the earliest a zip can say


def build_binary(go, ldflags, goos, goarch):
    out = os.path.join(BUILD, "bin", f"{goos}_{goarch}", "traceforge")
    env = dict(os.environ, CGO_ENABLED="0", GOOS=goos, GOARCH=goarch)
    run([go, "build", "-trimpath", "-ldflags", f"{ldflags} -s -w", "-o", out, "./cmd/traceforge"], cwd=ROOT, env=env)
    return out


def write_archive(path, prefix, files, mtime):
    """A reproducible .tar.gz: files is [(path on disk, name in the archive, mode)]."""
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            dir_info = tarfile.TarInfo(prefix)
            dir_info.type, dir_info.mode, dir_info.mtime = tarfile.DIRTYPE, 0o755, mtime
            tar.addfile(dir_info)
            for src, name, mode in files:
                info = tarfile.TarInfo(f"{prefix}/{name}")
                info.size, info.mode, info.mtime = os.path.getsize(src), mode, mtime
                with open(src, "rb") as f:
                    tar.addfile(info, f)


def build_wheel(binary, goos, goarch, platform, py_version, out_dir, epoch):
    stage = os.path.join(BUILD, "python", f"{goos}_{goarch}")
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(os.path.join(PACKAGING, "python"), stage,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info"))
    # Packaged, not forked: the module as helpers/python has it right now.
    shutil.copy2(os.path.join(ROOT, "helpers", "python", "traceforge_source.py"), stage)
    os.makedirs(os.path.join(stage, "bin"))
    shutil.copy2(binary, os.path.join(stage, "bin", "traceforge"))
    os.chmod(os.path.join(stage, "bin", "traceforge"), 0o755)
    env = dict(os.environ, TRACEFORGE_PY_VERSION=py_version, TRACEFORGE_WHEEL_PLATFORM=platform,
               SOURCE_DATE_EPOCH=str(epoch), PIP_CONFIG_FILE=os.devnull)
    run([VENV_PYTHON, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--no-index", "-w", out_dir, stage], env=env)
    wheel = os.path.join(out_dir, f"traceforge-{py_version}-py3-none-{platform}.whl")
    if not os.path.exists(wheel):
        raise SystemExit(f"dist: pip wheel did not write {wheel}: {sorted(os.listdir(out_dir))}")
    return wheel


def npm_pack(stage, out_dir):
    out = subprocess.run(["npm", "pack", "--pack-destination", out_dir, "--offline", "--ignore-scripts",
                          "--loglevel=error"], cwd=stage, check=True, capture_output=True, text=True).stdout
    name = out.strip().splitlines()[-1]
    print(f"+ npm pack {os.path.relpath(stage, ROOT)} -> {name}", flush=True)
    return os.path.join(out_dir, name)


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def build_npm_platform(binary, node_os, node_cpu, npm_version, out_dir):
    name = f"@traceforge/cli-{node_os}-{node_cpu}"
    stage = os.path.join(BUILD, "npm", f"cli-{node_os}-{node_cpu}")
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.join(stage, "bin"))
    shutil.copy2(binary, os.path.join(stage, "bin", "traceforge"))
    os.chmod(os.path.join(stage, "bin", "traceforge"), 0o755)
    write_json(os.path.join(stage, "package.json"), {
        "name": name,
        "version": npm_version,
        "description": f"The traceforge binary for {node_os}-{node_cpu}; install the traceforge package, which runs it",
        "os": [node_os],
        "cpu": [node_cpu],
        "files": ["bin/"],
        "preferUnplugged": True,
    })
    with open(os.path.join(stage, "README.md"), "w") as f:
        f.write(f"# {name}\n\nThe static `traceforge` binary for {node_os} on {node_cpu}, an optional dependency of\n"
                "[`traceforge`](https://www.npmjs.com/package/traceforge), whose `traceforge` command runs it.\n"
                "Install `traceforge`, not this package.\n")
    return npm_pack(stage, out_dir)


def build_npm_main(npm_version, platform_names, out_dir):
    stage = os.path.join(BUILD, "npm", "traceforge")
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(os.path.join(PACKAGING, "npm", "traceforge"), stage)
    helper = os.path.join(ROOT, "helpers", "node")
    with open(os.path.join(helper, "package.json")) as f:
        helper_pkg = json.load(f)
    # Packaged, not forked: the helper's files and entry points as helpers/node has them now.
    for entry in helper_pkg["files"]:
        src = os.path.join(helper, entry)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(stage, entry))
        else:
            shutil.copy2(src, os.path.join(stage, entry))
    with open(os.path.join(stage, "package.json")) as f:
        pkg = json.load(f)
    pkg["version"] = npm_version
    for key in ("engines", "exports", "types"):
        if key in helper_pkg:
            pkg[key] = helper_pkg[key]
    pkg["files"] = sorted(set(pkg["files"]) | set(helper_pkg["files"]))
    pkg["optionalDependencies"] = {name: npm_version for name in sorted(platform_names)}
    write_json(os.path.join(stage, "package.json"), pkg)
    os.chmod(os.path.join(stage, "bin", "traceforge.js"), 0o755)
    return npm_pack(stage, out_dir)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", required=True, help="the Makefile's VERSION")
    ap.add_argument("--go", default="go")
    ap.add_argument("--ldflags", default="", help="the Makefile's LDFLAGS (-X …Version=…); -s -w are added")
    ap.add_argument("--out", default=os.path.join(ROOT, "dist"))
    args = ap.parse_args()

    py_version, npm_version = package_versions(args.version)
    if os.path.realpath(sys.prefix) != os.path.realpath(VENV):
        ensure_venv()
        os.execv(VENV_PYTHON, [VENV_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])

    from packaging.version import Version  # the venv's

    if str(Version(py_version)) != py_version:
        raise SystemExit(f"dist: {py_version!r} is not a normalized PEP 440 version")
    out = os.path.abspath(args.out)
    if out in (ROOT, os.path.dirname(ROOT)) or out == os.sep:
        raise SystemExit(f"dist: refusing to empty {out}")
    shutil.rmtree(out, ignore_errors=True)
    for d in (out, os.path.join(out, "python"), os.path.join(out, "npm")):
        os.makedirs(d)
    epoch = source_date_epoch()
    file_version = args.version[1:] if args.version.startswith("v") else args.version
    print(f"dist: traceforge {args.version} (PyPI {py_version}, npm {npm_version})", flush=True)

    platform_names = []
    for goos, goarch, node_os, node_cpu, wheel_platform in TARGETS:
        binary = build_binary(args.go, args.ldflags, goos, goarch)
        stem = f"traceforge_{file_version}_{goos}_{goarch}"
        write_archive(os.path.join(out, stem + ".tar.gz"), stem,
                      [(binary, "traceforge", 0o755), (os.path.join(ROOT, "README.md"), "README.md", 0o644)], epoch)
        build_wheel(binary, goos, goarch, wheel_platform, py_version, os.path.join(out, "python"), epoch)
        build_npm_platform(binary, node_os, node_cpu, npm_version, os.path.join(out, "npm"))
        platform_names.append(f"@traceforge/cli-{node_os}-{node_cpu}")
    build_npm_main(npm_version, platform_names, os.path.join(out, "npm"))

    lines = []
    for dirpath, _, files in os.walk(out):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, out).replace(os.sep, "/")
            lines.append(f"{sha256(path)}  {rel}")
    lines.sort(key=lambda line: line.split("  ", 1)[1])
    with open(os.path.join(out, "checksums.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for line in lines:
        rel = line.split("  ", 1)[1]
        print(f"  {os.path.getsize(os.path.join(out, rel)) / 1e6:6.1f} MB  {rel}")
    print(f"dist: {len(lines)} artifacts and checksums.txt in {os.path.relpath(out, ROOT)}/")


if __name__ == "__main__":
    main()
