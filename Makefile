# Two entry points for a fresh machine: `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PG_URL ?= postgres://postgres@127.0.0.1:5432/portal
REDIS_URL ?= redis://127.0.0.1:6379/0
PORT ?= 8000

.PHONY: run test test-rounds test-fast bench setup setup-dev lighthouse test-browser bench-leaderboard browser-deps server-deps fuzz lint format messages

# `make run` installs the runtime alone (requirements.txt); the tests, lint, fuzzing and benches add
# requirements-dev.txt (pytest, selenium, atheris, moto, ruff, and the agent's torch for its CPU-mode tests).
$(VENV)/.runtime: requirements.txt
	@pkg-config --exists icu-i18n 2>/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libicu-dev pkg-config g++ >/dev/null) || \
	  echo "PyICU needs ICU's headers to build: apt-get install -y libicu-dev pkg-config g++"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt requirements-agent.txt
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

# What `make run` needs. The log parser's C scanner is built in place (the parser falls back to Python
# without a compiler); the Chinese catalogue is compiled (the .mo files are built, not kept in git).
setup: $(VENV)/.runtime node_modules/.installed locale/zh_Hans/LC_MESSAGES/django.mo
	@$(PY) bin/build_scan.py

# The translations (locale/*/LC_MESSAGES/django.po) compiled by Django's compilemessages, which runs GNU
# gettext's msgfmt (Debian's gettext, installed with apt-get where it can, as root).
locale/zh_Hans/LC_MESSAGES/django.mo: locale/zh_Hans/LC_MESSAGES/django.po locale/zh_Hans/LC_MESSAGES/djangojs.po $(VENV)/.runtime
	@command -v msgfmt >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gettext >/dev/null) || \
	  echo "compilemessages needs GNU gettext's msgfmt: apt-get install -y gettext"
	$(PY) manage.py compilemessages --verbosity 0

# After marking strings: the catalogue gathered again from the templates and the code (then translate
# every new entry in locale/zh_Hans/LC_MESSAGES/django.po; tests/portal/test_translations.py fails on one left).
messages: setup
	$(PY) manage.py makemessages --locale zh_Hans --no-obsolete --no-location \
	  --ignore '.venv/*' --ignore 'node_modules/*' --ignore 'tests/*' --ignore 'bench/*' --ignore 'var/*' \
	  --ignore 'build/*' --ignore 'clients/*' --ignore 'agent/*'
	$(PY) manage.py makemessages -d djangojs --locale zh_Hans --no-obsolete --no-location \
	  --ignore '.venv/*' --ignore 'node_modules/*' --ignore 'static/vendor/*' --ignore 'tests/*' \
	  --ignore 'bench/*' --ignore 'var/*' --ignore 'build/*' --ignore 'clients/*' --ignore 'agent/*'

# What the tests need besides: the dev packages, axe-core, Debian's chromium with its driver, and nginx.
setup-dev: setup $(VENV)/.dev tests/browser/axe/node_modules/.installed browser-deps server-deps

# Browser-side files the pages serve themselves (package.json: plotly.js's basic bundle); without npm
# the pages fall back to the full bundle from the plotly Python package (check leaderboard.W002).
node_modules/.installed: package.json package-lock.json
	@if command -v npm >/dev/null; then npm ci --no-audit --no-fund --loglevel=error && touch $@; \
	  else echo "npm is not installed: the pages serve the full plotly bundle (apt-get install -y npm)"; fi

# axe-core for the browser tests' accessibility check (tests/browser/axe/package.json), injected into pages.
tests/browser/axe/node_modules/.installed: tests/browser/axe/package.json tests/browser/axe/package-lock.json
	@if command -v npm >/dev/null; then cd tests/browser/axe && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	  else echo "npm is not installed: the accessibility tests will fail (apt-get install -y npm)"; fi

# Embedded: SQLite and a file-system Celery transport under ./var (VAR_DIR), DEBUG on for the demo. The site,
# a worker and beat run under bin/serve.py, which stops them all however it is stopped (make passes SIGTERM on);
# --load submits the shared rounds (load_sample_data) beside them: the site answers at once, and each round
# appears as the worker finishes it.
run: export DEBUG = 1
run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_rounds
	$(PY) manage.py ensure_admin
	exec $(PY) bin/serve.py $(PORT) --load

# Everything but the whole-round comparisons, in four pytest-xdist workers (two per core), each with its own
# test database and Redis databases (bin/run_tests.py); PostgreSQL and Redis when they answer (tests that
# need them skip with a reason otherwise). Prints the ten slowest tests. Stopped (Ctrl-C, kill), it ends
# every process the tests started.
test: setup-dev
	$(PY) bin/run_tests.py --durations=10

# The whole-round comparisons (tests marked whole_rounds: tests/checking/test_shared_rounds.py), which
# `make test` skips for time: each shared round (v0.5, v0.6, v1.0, v4.0, v5.1) ingested whole and set
# beside mlperf-logging, about 6.5 minutes for the five on two cores. v0.5, v0.6 and v5.1 ran in `make test`
# until issue 35; CI (.ci/run) runs this after `make test`, so every test still runs there.
test-rounds: export WHOLE_ROUNDS = 1
test-rounds: setup-dev
	$(PY) bin/run_tests.py -m whole_rounds --durations=10

# ruff (ruff.toml): `make lint` checks as CI does; `make format` rewrites.
lint: setup-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: setup-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix --select I .

# Coverage-guided fuzzing (atheris) of the log parser, description reader, layout reader and unpacker,
# SECONDS per target, a target per core at once; a crash exits non-zero and leaves its input under var/fuzz-crashes/.
FUZZ_SECONDS ?= 25
fuzz: setup-dev
	$(PY) bin/fuzz.py --seconds $(FUZZ_SECONDS)

bench: setup-dev
	$(PY) bench/ingest.py

# Debian's headless Chromium and its driver for the browser tests, and a Chinese font for the pages read in
# Chinese (tests/browser/test_chinese_browser.py), installed where apt-get may (as root); elsewhere the browser
# tests skip with the reason.
browser-deps:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) || \
	  echo "chromium and chromium-driver could not be installed: the browser tests skip (apt-get install -y chromium chromium-driver)"
	@fc-list :lang=zh 2>/dev/null | grep -q . || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei >/dev/null) || \
	  echo "no Chinese font could be installed: the Chinese browser tests skip (apt-get install -y fonts-wqy-microhei)"

# Debian's nginx, the deployment's front (deploy/nginx.conf), for the tests that serve the portal as the README
# deploys it; installed where apt-get may (as root), elsewhere those tests skip with the reason.
server-deps:
	@command -v nginx >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null) || \
	  echo "nginx could not be installed: the tests of the deployment skip (apt-get install -y nginx)"

# The browser tests alone (screenshots in artifacts/screenshots/).
test-browser: setup-dev
	$(PY) bin/run_tests.py tests/browser

# The round page and CSV export on 50 rounds × 400 systems × 10 benchmarks, served by gunicorn, loaded by wrk.
# Lighthouse (bench/lighthouse/package.json, mobile) on the six page kinds a reader lands on (round, result,
# system, log, compare, organisation) of the v5.1 round, run against Debian's chromium: prints each page's
# performance, accessibility, best-practices and SEO scores (one run a page; the median of LIGHTHOUSE_RUNS, 3, for
# a page whose first run misses) and fails under 95, 100, 100 and 95 (issue 39). CI runs it: 15-40 s a run.
lighthouse: setup-dev
	bench/lighthouse.sh

bench-leaderboard: setup-dev
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(PY) bench/leaderboard.py
