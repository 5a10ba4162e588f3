# traceforge — build, test and measure.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -X github.com/traceforge/traceforge/internal/cli.Version=$(VERSION)
BIN       := bin/traceforge
FUZZTIME  ?= 10s

.PHONY: build install test deps debdeps unit e2e helpers lint fuzz bench stress tidy-check demo selfcheck selfrecord clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/traceforge
	$(GO) build -o bin/tf-fake-upstream ./cmd/tf-fake-upstream
	$(GO) build -o bin/demo-app ./examples/demo

# Record the example app against the bundled fake upstream, verify offline, show drift.
demo: build
	./scripts/demo.sh

# The project's own snapshots (.ai-snapshots/, from examples/demo) verified
# statically and by replaying the demo app offline.
selfcheck: build
	bin/traceforge verify
	env -u OPENAI_API_KEY bin/traceforge verify --fail-on-unused -- bin/demo-app

# Re-record the project's own snapshots (after changing examples/demo).
selfrecord: build
	./scripts/selfrecord.sh

install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/traceforge

# The whole suite: unit, CLI scripts, end to end with the real SDKs, and the
# attribution helpers' own tests.
test: deps unit selfcheck e2e e2e-python helpers packaging-test

# What the tests need beyond Go modules, installed only when missing, so that
# `make test` works on a fresh clone (.ci/run relies on it):
# - the pinned npm packages of the Node hash checker and the end-to-end
#   clients (`npm ci` when node_modules is missing or older than its lock;
#   npm writes node_modules/.package-lock.json, the stamp);
# - the Node helper's runner fixture (Vitest, Jest, TypeScript): `npm install`
#   at the locked versions, because npm 11's `npm ci` refuses a lock without
#   rollup's packages for other platforms;
# - Debian's python3-httpx and python3-pytest (the Python helper's tests run
#   with /usr/bin/python3) and chromium (HTML reports opened headless), with
#   apt-get when run as root, else a message naming the packages;
# - the Python end-to-end suite's venv (e2e/python/.venv; see e2e-python).
NPM_DIRS := tools/hashcheck e2e/node
deps: $(foreach d,$(NPM_DIRS),$(d)/node_modules/.package-lock.json) \
	helpers/node/fixtures/runners/node_modules/.package-lock.json debdeps \
	e2e/python/.venv/.requirements.stamp

%/node_modules/.package-lock.json: %/package-lock.json
	cd $* && npm ci --no-audit --no-fund
	@touch $@

helpers/node/fixtures/runners/node_modules/.package-lock.json: helpers/node/fixtures/runners/package-lock.json
	cd helpers/node/fixtures/runners && npm install --no-audit --no-fund
	@touch $@

DEB_PACKAGES := python3-httpx python3-pytest chromium
debdeps:
	@if /usr/bin/python3 -c 'import httpx, pytest' 2>/dev/null && command -v chromium >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
	  echo "make test needs Debian's $(DEB_PACKAGES): run sudo apt-get install -y $(DEB_PACKAGES)"; exit 1; \
	fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEB_PACKAGES)

unit:
	$(GO) test -race -count=1 ./...

e2e:
	@if [ -d e2e ]; then cd e2e && $(GO) test -count=1 ./...; fi

# The Python SDKs end to end (e2e/python, pytest on two workers) with the
# binaries just built. Their pinned packages (e2e/python/requirements.txt) go
# into a venv made from E2E_PYTHON, the python3 on PATH (pyenv's 3.11 on
# these machines; Debian's needs python3-venv, installed as root); pip runs
# again only when requirements.txt is newer than the venv's stamp.
E2E_PYTHON    ?= python3
E2E_PY_VENV   := e2e/python/.venv
E2E_PY_STAMP  := $(E2E_PY_VENV)/.requirements.stamp
.PHONY: e2e-python
e2e-python: build $(E2E_PY_STAMP)
	cd e2e/python && TF_E2E_BIN=$(CURDIR)/bin .venv/bin/python -m pytest -n 2 --dist loadscope

$(E2E_PY_STAMP): e2e/python/requirements.txt
	@if ! $(E2E_PY_VENV)/bin/python -c '' 2>/dev/null; then \
	  rm -rf $(E2E_PY_VENV); \
	  if ! $(E2E_PYTHON) -m venv $(E2E_PY_VENV); then \
	    [ "$$(id -u)" -eq 0 ] || { echo "make deps: $(E2E_PYTHON) cannot make a venv: install python3-venv"; exit 1; }; \
	    rm -rf $(E2E_PY_VENV); apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv && \
	    $(E2E_PYTHON) -m venv $(E2E_PY_VENV) || exit 1; \
	  fi; \
	fi
	$(E2E_PY_VENV)/bin/python -m pip install -q --disable-pip-version-check -r e2e/python/requirements.txt
	@touch $@

# The Node package (node --test: unit, npm pack install, node:test, Vitest,
# Jest, TypeScript types) and the Python module (Debian's python3 with python3-httpx and
# python3-pytest; pytest's exit 5, no tests collected, fails too).
helpers:
	cd helpers/node && npm test
	/usr/bin/python3 -m pytest helpers/python

lint:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# The long fault loops behind SECURITY.md (go test runs a few iterations of
# each): CRASH_ITERATIONS kill -9s of a real record under 16 parallel
# clients, a 10^6-entry manifest, a real full tmpfs (root only; skipped
# otherwise), and the concurrency tests repeated under -race.
CRASH_ITERATIONS ?= 100
stress:
	TRACEFORGE_STRESS=1 TRACEFORGE_CRASH_ITERATIONS=$(CRASH_ITERATIONS) $(GO) test -count=1 -timeout 60m -v -run '^TestCrashSafetyKill9Loop$$' ./internal/cli/
	TRACEFORGE_STRESS=1 TRACEFORGE_MANIFEST_ENTRIES=1000000 $(GO) test -count=1 -timeout 30m -v -run '^TestCheckSetHugeManifest$$' ./internal/check/
	TRACEFORGE_STRESS=1 $(GO) test -count=1 -v -run '^TestWriteAtomicTmpfsFull$$' ./internal/snapshot/
	$(GO) test -race -count=20 -run 'Concurrent|LockAcrossProcesses' ./internal/record/ ./internal/cli/

# Benchmarks and performance targets (BENCHMARKS.md is rewritten with the
# figures). BENCH_QUICK=1 make bench: 1k set only, short runs (not the default).
bench: build
	$(GO) build -o bin/tfbench ./bench/cmd/tfbench
	./bench/aimock/install.sh
	GO=$(GO) bin/tfbench run -out BENCHMARKS.md

tidy-check:
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

# Release packages (docs/install.md): archives for linux and darwin x amd64
# and arm64 (static, CGO_ENABLED=0; windows does not compile: flock and
# O_NOFOLLOW), a wheel per platform and the npm packages, with checksums.txt,
# into dist/. The first run installs pip and hatchling, pinned with hashes
# (packaging/requirements-build.txt), into build/packaging/venv.
.PHONY: dist packaging-deps packaging-test
DIST_VERSION := $(VERSION)
DIST_PYTHON  ?= python3
dist:
	$(DIST_PYTHON) packaging/dist.py --version "$(DIST_VERSION)" --go "$(GO)" --ldflags "$(LDFLAGS)" --out dist

# Installs what make dist built, offline, into a clean venv and a clean npm
# project and runs it (packaging/tests/test_packages.py). pytest and httpx for
# that venv come from a wheelhouse downloaded once, pinned with hashes
# (packaging/requirements-test.txt).
PACKAGING_WHEELHOUSE := build/packaging/wheelhouse
packaging-deps: $(PACKAGING_WHEELHOUSE)/.stamp
$(PACKAGING_WHEELHOUSE)/.stamp: packaging/requirements-test.txt
	rm -rf $(PACKAGING_WHEELHOUSE)
	$(DIST_PYTHON) -m pip download -q --disable-pip-version-check --require-hashes --only-binary :all: --no-deps \
	  -d $(PACKAGING_WHEELHOUSE) -r packaging/requirements-test.txt
	@touch $@

packaging-test: dist packaging-deps
	$(DIST_PYTHON) packaging/tests/test_packages.py --version "$(DIST_VERSION)" --dist dist --python "$(DIST_PYTHON)"

clean:
	rm -rf bin
	rm -rf dist build/packaging
