#!/usr/bin/env python3
"""make packaging-test: installs what make dist built, offline, and runs it.

    python3 packaging/tests/test_packages.py --version VERSION [--dist dist]

- dist/: checksums.txt covers every artifact; each archive, wheel and npm
  tarball holds a static binary of its own OS and CPU (ELF / Mach-O headers),
  executable, and the helpers exactly as helpers/python and helpers/node
  have them; no npm package has an install script.
- Python: a clean venv (python -m venv) gets this machine's wheel with
  `pip install --no-index`, then pytest and httpx from the wheelhouse that
  make packaging-deps downloaded (build/packaging/wheelhouse, pinned with
  hashes in packaging/requirements-test.txt), also --no-index.
  `traceforge version` (found on PATH) and `python -m traceforge version`
  print the built VERSION; pytest runs tests/python/test_plugin.py with no
  -p flag: the entry point loads the plugin, which attributes a call sent
  from a library thread to a loopback server to the running test.
- npm: a clean project installs the two local tarballs (this platform's
  @traceforge/cli-* and traceforge) with --offline, an empty cache and an
  unreachable registry; `npx traceforge version` prints the built VERSION,
  the launcher passes exit codes through, and tests/node/smoke.mjs imports
  the helper from traceforge and checks the header on a loopback request.

Needs python3 with venv and pip (ensurepip), node and npm; no network.
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "packaging"))
import dist  # noqa: E402  (packaging/dist.py: the targets and the version mapping)

ARGS = None  # set in main
WHEELHOUSE = os.path.join(ROOT, "build", "packaging", "wheelhouse")
TEST_REQUIREMENTS = os.path.join(ROOT, "packaging", "requirements-test.txt")


def host_target():
    goos = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    goarch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    for t in dist.TARGETS:
        if (t[0], t[1]) == (goos, goarch):
            return t
    raise unittest.SkipTest(f"no traceforge package is built for {platform.system()} {platform.machine()}")


def binary_kind(data):
    """(GOOS, GOARCH, static) of an executable's first bytes: ELF or 64-bit Mach-O."""
    if data[:4] == b"\x7fELF":
        assert data[4] == 2 and data[5] == 1, "want a 64-bit little-endian ELF"
        machine = struct.unpack_from("<H", data, 18)[0]
        phoff = struct.unpack_from("<Q", data, 32)[0]
        phentsize, phnum = struct.unpack_from("<HH", data, 54)
        types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
        PT_INTERP = 3  # a dynamic loader: the binary would need a libc
        return "linux", {0x3E: "amd64", 0xB7: "arm64"}.get(machine, hex(machine)), PT_INTERP not in types
    if data[:4] == b"\xcf\xfa\xed\xfe":
        cpu = struct.unpack_from("<I", data, 4)[0]
        return "darwin", {0x01000007: "amd64", 0x0100000C: "arm64"}.get(cpu, hex(cpu)), True
    raise AssertionError(f"not an ELF or Mach-O 64 executable: {data[:8]!r}")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def run(cmd, cwd=None, env=None, check=True, timeout=300):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def expected_version_line():
    return f"traceforge {ARGS.version}"


class VersionMapping(unittest.TestCase):
    """The Makefile's VERSION to PyPI and npm versions (the table in docs/install.md)."""

    def test_versions(self):
        for version, want in [
            ("v1.2.3", ("1.2.3", "1.2.3")),
            ("v1.2.3-rc.1", ("1.2.3rc1", "1.2.3-rc.1")),
            ("v1.2.3-beta2", ("1.2.3b2", "1.2.3-beta2")),
            ("v1.2.3-dirty", ("1.2.4.dev0+dirty", "1.2.4-dev.0.dirty")),
            ("v1.2.3-4-gabc1234", ("1.2.4.dev4+gabc1234", "1.2.4-dev.4.gabc1234")),
            ("v1.2.3-rc.1-4-gabc1234-dirty", ("1.2.3rc1.post4.dev0+gabc1234.dirty", "1.2.3-rc.1.dev.4.gabc1234.dirty")),
            ("abc1234", ("0.0.0.dev0+gabc1234", "0.0.0-dev.0.gabc1234")),
            ("0123456-dirty", ("0.0.0.dev0+g0123456.dirty", "0.0.0-dev.0.g0123456.dirty")),
            ("devel", ("0.0.0.dev0", "0.0.0-dev.0")),
        ]:
            self.assertEqual(dist.package_versions(version), want, version)

    def test_other_versions_are_refused(self):
        for version in ("latest", "v1.2", "v1.2.3-foo", "1.2.3 "):
            with self.assertRaises(dist.VersionError, msg=version):
                dist.package_versions(version)


class DistContents(unittest.TestCase):
    """What make dist wrote, file by file."""

    @classmethod
    def setUpClass(cls):
        cls.dist = ARGS.dist
        cls.py_version, cls.npm_version = dist.package_versions(ARGS.version)
        cls.file_version = ARGS.version[1:] if ARGS.version.startswith("v") else ARGS.version

    def test_checksums_cover_every_artifact(self):
        with open(os.path.join(self.dist, "checksums.txt")) as f:
            listed = dict(reversed(line.split("  ", 1)) for line in f.read().splitlines())
        on_disk = set()
        for dirpath, _, files in os.walk(self.dist):
            for name in files:
                rel = os.path.relpath(os.path.join(dirpath, name), self.dist).replace(os.sep, "/")
                if rel != "checksums.txt":
                    on_disk.add(rel)
        self.assertEqual(set(listed), on_disk)
        for rel, digest in listed.items():
            with open(os.path.join(self.dist, rel), "rb") as f:
                self.assertEqual(sha256(f.read()), digest, rel)
        # 4 archives, 4 wheels, 4 platform packages and the main npm package.
        self.assertEqual(len(on_disk), 3 * len(dist.TARGETS) + 1)

    def test_archives(self):
        for goos, goarch, *_ in dist.TARGETS:
            stem = f"traceforge_{self.file_version}_{goos}_{goarch}"
            with tarfile.open(os.path.join(self.dist, stem + ".tar.gz")) as tar:
                self.assertEqual(sorted(tar.getnames()), [stem, f"{stem}/README.md", f"{stem}/traceforge"])
                member = tar.getmember(f"{stem}/traceforge")
                self.assertEqual(member.mode, 0o755)
                self.assertEqual(binary_kind(tar.extractfile(member).read(4096)), (goos, goarch, True), stem)

    def test_archive_binary_of_this_machine_runs(self):
        goos, goarch, *_ = host_target()
        stem = f"traceforge_{self.file_version}_{goos}_{goarch}"
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(os.path.join(self.dist, stem + ".tar.gz")) as tar:
                if hasattr(tarfile, "data_filter"):  # 3.11.4+
                    tar.extractall(tmp, filter="data")
                else:
                    tar.extractall(tmp)
            out = run([os.path.join(tmp, stem, "traceforge"), "version"]).stdout.strip()
        self.assertEqual(out, expected_version_line())

    def test_wheels(self):
        with open(os.path.join(ROOT, "helpers", "python", "traceforge_source.py"), "rb") as f:
            helper = f.read()
        data = f"traceforge-{self.py_version}.data"
        info = f"traceforge-{self.py_version}.dist-info"
        for goos, goarch, _, _, tag in dist.TARGETS:
            name = f"traceforge-{self.py_version}-py3-none-{tag}.whl"
            with zipfile.ZipFile(os.path.join(self.dist, "python", name)) as whl:
                names = set(whl.namelist())
                for want in (f"{data}/scripts/traceforge", "traceforge/__init__.py", "traceforge/__main__.py",
                             "traceforge_source.py", f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD",
                             f"{info}/entry_points.txt"):
                    self.assertIn(want, names, name)
                script = whl.getinfo(f"{data}/scripts/traceforge")
                self.assertEqual(stat.S_IMODE(script.external_attr >> 16), 0o755, name)
                self.assertEqual(binary_kind(whl.read(script)[:4096]), (goos, goarch, True), name)
                self.assertEqual(whl.read("traceforge_source.py"), helper, "the wheel's module is helpers/python's")
                wheel_meta = whl.read(f"{info}/WHEEL").decode()
                self.assertIn("Root-Is-Purelib: false", wheel_meta)
                self.assertEqual(sorted(line[5:] for line in wheel_meta.splitlines() if line.startswith("Tag: ")),
                                 sorted(f"py3-none-{p}" for p in tag.split(".")))
                entry_points = whl.read(f"{info}/entry_points.txt").decode()
                self.assertIn("[pytest11]\ntraceforge_source = traceforge_source", entry_points)
                self.assertIn(f"Version: {self.py_version}\n", whl.read(f"{info}/METADATA").decode())

    def _npm_package(self, tgz):
        with tarfile.open(tgz) as tar:
            files = {m.name: m for m in tar.getmembers() if m.isfile()}
            pkg = json.load(tar.extractfile(files["package/package.json"]))
            return tar, files, pkg, {n: tar.extractfile(m).read() for n, m in files.items()}

    def test_npm_platform_packages(self):
        for goos, goarch, node_os, node_cpu, _ in dist.TARGETS:
            tgz = os.path.join(self.dist, "npm", f"traceforge-cli-{node_os}-{node_cpu}-{self.npm_version}.tgz")
            _, files, pkg, contents = self._npm_package(tgz)
            self.assertEqual(pkg["name"], f"@traceforge/cli-{node_os}-{node_cpu}")
            self.assertEqual(pkg["version"], self.npm_version)
            self.assertEqual((pkg["os"], pkg["cpu"]), ([node_os], [node_cpu]))
            self.assertNotIn("scripts", pkg)
            self.assertEqual(files["package/bin/traceforge"].mode & 0o777, 0o755)
            self.assertEqual(binary_kind(contents["package/bin/traceforge"][:4096]), (goos, goarch, True), tgz)

    def test_npm_main_package(self):
        _, files, pkg, contents = self._npm_package(os.path.join(self.dist, "npm", f"traceforge-{self.npm_version}.tgz"))
        self.assertEqual(pkg["name"], "traceforge")
        self.assertEqual(pkg["version"], self.npm_version)
        self.assertEqual(pkg["bin"], {"traceforge": "bin/traceforge.js"})
        self.assertNotIn("scripts", pkg, "no install, preinstall or postinstall script")
        self.assertEqual(pkg["optionalDependencies"],
                         {f"@traceforge/cli-{t[2]}-{t[3]}": self.npm_version for t in dist.TARGETS})
        self.assertNotIn("dependencies", pkg)
        with open(os.path.join(ROOT, "helpers", "node", "package.json")) as f:
            helper_pkg = json.load(f)
        self.assertEqual(pkg["exports"], helper_pkg["exports"])
        src = os.path.join(ROOT, "helpers", "node", "src")
        helper_files = {}
        for dirpath, _, names in os.walk(src):
            for name in names:
                rel = os.path.relpath(os.path.join(dirpath, name), src).replace(os.sep, "/")
                with open(os.path.join(dirpath, name), "rb") as f:
                    helper_files[f"package/src/{rel}"] = f.read()
        self.assertEqual({n: c for n, c in contents.items() if n.startswith("package/src/")}, helper_files,
                         "the package's src/ is helpers/node/src")
        self.assertEqual(files["package/bin/traceforge.js"].mode & 0o777, 0o755)
        self.assertTrue(contents["package/bin/traceforge.js"].startswith(b"#!/usr/bin/env node\n"))


class PythonInstall(unittest.TestCase):
    """pip install --no-index of this machine's wheel into a clean venv."""

    @classmethod
    def setUpClass(cls):
        _, _, _, _, tag = host_target()
        py_version, _ = dist.package_versions(ARGS.version)
        cls.py_version = py_version
        wheel = os.path.join(ARGS.dist, "python", f"traceforge-{py_version}-py3-none-{tag}.whl")
        if not os.path.isdir(WHEELHOUSE):
            raise AssertionError(f"{WHEELHOUSE} is missing: run make packaging-deps (it downloads pytest and httpx)")
        cls.tmp = tempfile.mkdtemp(prefix="tf-pkg-py-")
        cls.venv = os.path.join(cls.tmp, "venv")
        cls.bin = os.path.join(cls.venv, "bin")
        started = time.monotonic()
        run([ARGS.python, "-m", "venv", cls.venv])
        # No index, no config, no user site: everything comes from dist/ and the wheelhouse.
        cls.env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
        cls.env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                       PYTHONNOUSERSITE="1", PATH=cls.bin + os.pathsep + os.environ.get("PATH", ""))
        pip = [os.path.join(cls.bin, "python"), "-m", "pip", "install", "-q", "--no-index"]
        run(pip + ["--no-deps", wheel], env=cls.env)
        run(pip + ["--find-links", WHEELHOUSE, "--require-hashes", "--only-binary", ":all:", "-r", TEST_REQUIREMENTS],
            env=cls.env)
        print(f"\n  (venv with the wheel, pytest and httpx installed offline in {time.monotonic() - started:.1f}s)",
              file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_traceforge_on_path_is_the_binary(self):
        found = shutil.which("traceforge", path=self.env["PATH"])
        self.assertEqual(found, os.path.join(self.bin, "traceforge"))
        with open(found, "rb") as f:
            self.assertEqual(binary_kind(f.read(4096))[:2], host_target()[:2])
        out = run(["traceforge", "version"], cwd=self.tmp, env=self.env).stdout.strip()
        self.assertEqual(out, expected_version_line())

    def test_python_m_traceforge(self):
        out = run([os.path.join(self.bin, "python"), "-m", "traceforge", "version"], cwd=self.tmp, env=self.env)
        self.assertEqual(out.stdout.strip(), expected_version_line())
        # The binary's exit code comes back unchanged (2: usage error).
        bad = run([os.path.join(self.bin, "python"), "-m", "traceforge", "no-such-command"], cwd=self.tmp,
                  env=self.env, check=False)
        self.assertEqual(bad.returncode, 2, bad.stderr)

    def test_installed_metadata(self):
        out = run([os.path.join(self.bin, "python"), "-c",
                   "import importlib.metadata as m, traceforge, traceforge_source;"
                   "print(m.version('traceforge'));"
                   "print([e.value for e in m.entry_points(group='pytest11') if e.name == 'traceforge_source']);"
                   "print(traceforge.binary_path())"], cwd=self.tmp, env=self.env).stdout.splitlines()
        self.assertEqual(out, [self.py_version, "['traceforge_source']", os.path.join(self.bin, "traceforge")])

    def _pytest(self, *flags, mode):
        project = os.path.join(self.tmp, f"project-{mode}")
        os.makedirs(project)
        shutil.copy(os.path.join(HERE, "python", "test_plugin.py"), project)
        env = dict(self.env, TRACEFORGE_PLUGIN=mode)
        p = run([os.path.join(self.bin, "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", *flags],
                cwd=project, env=env, check=False)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("4 passed", p.stdout)

    def test_pytest_plugin_from_the_entry_point(self):
        self._pytest(mode="entry-point")

    def test_pytest_plugin_with_the_p_flag_too(self):
        self._pytest("-p", "traceforge_source", mode="flag")

    def test_pytest_plugin_can_be_turned_off(self):
        self._pytest("-p", "no:traceforge_source", mode="off")


class NpmInstall(unittest.TestCase):
    """npm install --offline of the local tarballs into a clean project."""

    @classmethod
    def setUpClass(cls):
        _, _, node_os, node_cpu, _ = host_target()
        _, cls.npm_version = dist.package_versions(ARGS.version)
        cls.platform_pkg = f"@traceforge/cli-{node_os}-{node_cpu}"
        npm_dir = os.path.join(ARGS.dist, "npm")
        cls.platform_tgz = os.path.join(npm_dir, f"traceforge-cli-{node_os}-{node_cpu}-{cls.npm_version}.tgz")
        main_tgz = os.path.join(npm_dir, f"traceforge-{cls.npm_version}.tgz")
        cls.tmp = tempfile.mkdtemp(prefix="tf-pkg-npm-")
        cls.project = os.path.join(cls.tmp, "project")
        os.makedirs(cls.project)
        with open(os.path.join(cls.project, "package.json"), "w") as f:
            json.dump({"name": "traceforge-packaging-test", "private": True, "type": "module"}, f)
        # An empty cache, no user config and a registry nothing listens on:
        # every package must come from the two tarballs.
        cls.env = {k: v for k, v in os.environ.items() if not k.lower().startswith("npm_config_")}
        cls.env.update(npm_config_cache=os.path.join(cls.tmp, "npm-cache"),
                       npm_config_userconfig=os.path.join(cls.tmp, "npmrc-none"),
                       npm_config_registry="http://127.0.0.1:9/", npm_config_offline="true",
                       npm_config_audit="false", npm_config_fund="false", npm_config_update_notifier="false")
        started = time.monotonic()
        run(["npm", "install", "--offline", "--loglevel=error", cls.platform_tgz, main_tgz], cwd=cls.project, env=cls.env)
        print(f"\n  (npm project with the tarballs installed offline in {time.monotonic() - started:.1f}s)",
              file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_platform_package_comes_from_the_local_tarball(self):
        with open(os.path.join(self.project, "package-lock.json")) as f:
            lock = json.load(f)["packages"]
        entry = lock[f"node_modules/{self.platform_pkg}"]
        self.assertEqual(entry["version"], self.npm_version)
        self.assertTrue(entry["resolved"].startswith("file:"), entry)
        main = lock["node_modules/traceforge"]
        self.assertTrue(main["resolved"].startswith("file:"), main)
        self.assertEqual(main["optionalDependencies"][self.platform_pkg], self.npm_version)
        binary = os.path.join(self.project, "node_modules", *self.platform_pkg.split("/"), "bin", "traceforge")
        self.assertTrue(os.access(binary, os.X_OK), binary)
        # Only this platform's binary is installed.
        others = sorted(os.listdir(os.path.join(self.project, "node_modules", "@traceforge")))
        self.assertEqual(others, [self.platform_pkg.split("/")[1]])

    def test_npx_traceforge_version(self):
        out = run(["npx", "--offline", "traceforge", "version"], cwd=self.project, env=self.env).stdout.strip()
        self.assertEqual(out, expected_version_line())

    def test_launcher_passes_exit_codes_and_output_through(self):
        launcher = os.path.join(self.project, "node_modules", ".bin", "traceforge")
        p = run([launcher, "no-such-command"], cwd=self.project, env=self.env, check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no-such-command", p.stderr)

    def _record_until_sigterm(self, cmd):
        """Runs `cmd record` serving on a free port, sends SIGTERM once it serves: (exit code, stderr, its children)."""
        workdir = tempfile.mkdtemp(dir=self.tmp)
        p = subprocess.Popen([*cmd, "record", "--listen", "127.0.0.1:0"], cwd=workdir, env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watchdog = threading.Timer(60, p.kill)
        watchdog.start()
        try:
            for line in p.stdout:  # the exports it prints once it listens
                if line.startswith("export TRACEFORGE_URL="):
                    break
            children_file = f"/proc/{p.pid}/task/{p.pid}/children"
            children = []
            if os.path.exists(children_file):
                with open(children_file) as f:
                    children = [int(c) for c in f.read().split()]
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=30)
        finally:
            watchdog.cancel()
            if p.poll() is None:
                p.kill()
                p.wait()
        return p.returncode, err, children

    def test_launcher_forwards_sigterm(self):
        binary = os.path.join(self.project, "node_modules", *self.platform_pkg.split("/"), "bin", "traceforge")
        direct_code, direct_err, _ = self._record_until_sigterm([binary])
        code, err, children = self._record_until_sigterm([os.path.join(self.project, "node_modules", ".bin",
                                                                       "traceforge")])
        # traceforge got the signal, stopped cleanly (its summary), and the
        # launcher exited as the binary alone does.
        self.assertIn("traceforge record: 0 call(s)", direct_err)
        self.assertIn("traceforge record: 0 call(s)", err)
        self.assertEqual(code, direct_code, err)
        if sys.platform == "linux":
            self.assertEqual(len(children), 1, "the launcher runs the binary as its one child")
            with self.assertRaises(ProcessLookupError):
                os.kill(children[0], 0)

    def test_launcher_without_the_platform_package(self):
        pkg_dir = os.path.join(self.project, "node_modules", *self.platform_pkg.split("/"))
        moved = pkg_dir + ".away"
        os.rename(pkg_dir, moved)
        try:
            p = run([os.path.join(self.project, "node_modules", ".bin", "traceforge"), "version"], cwd=self.project,
                    env=self.env, check=False)
        finally:
            os.rename(moved, pkg_dir)
        self.assertEqual(p.returncode, 2)
        self.assertIn(f"the optional dependency {self.platform_pkg} is not installed", p.stderr)

    def test_helper_exported_from_traceforge(self):
        shutil.copy(os.path.join(HERE, "node", "smoke.mjs"), self.project)
        p = run(["node", "smoke.mjs"], cwd=self.project, env=self.env)
        self.assertIn("smoke: traceforge exports the helper and it attributed the call", p.stdout)


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", required=True, help="the VERSION make dist built")
    ap.add_argument("--dist", default=os.path.join(ROOT, "dist"))
    ap.add_argument("--python", default=sys.executable, help="the Python whose venv module makes the clean venv")
    ARGS, rest = ap.parse_known_args()
    ARGS.dist = os.path.abspath(ARGS.dist)
    started = time.monotonic()
    prog = unittest.main(argv=[sys.argv[0], *rest], exit=False, testRunner=unittest.TextTestRunner(verbosity=2))
    r = prog.result
    failed = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses)
    # A setUpClass error is an error of no test that ran (an _ErrorHolder).
    failed_run = sum(isinstance(t, unittest.TestCase) for t, _ in r.failures + r.errors) + len(r.unexpectedSuccesses)
    passed = r.testsRun - failed_run - len(r.skipped)
    print(f"packaging tests took {time.monotonic() - started:.0f}s")
    print(f"packaging: {passed} passed, {failed} failed"
          + (f", {len(r.skipped)} skipped" if r.skipped else ""))
    sys.exit(0 if failed == 0 and not r.skipped and r.testsRun > 0 else 1)


if __name__ == "__main__":
    main()
