#!/usr/bin/env python
"""Run the test suite against PostgreSQL and Redis when they answer, else embedded, in parallel processes.

Prints which services are used, so that a run without them says so instead of
passing silently; the tests that need them skip with that reason.

One pytest-xdist worker process per Redis database pair: TEST_BROKER_URL and TEST_CACHE_URL each name
one database per worker, comma-separated (by default two workers: 15 and 13 for the brokers, 14 and 12
for the shared cache); one of each runs the suite in one process. Each worker takes its own from
TEST_BROKER_URLS and TEST_CACHE_URLS (tests/conftest.py), and pytest-django gives it its own test
database (test_<name>_gw0, ...).
"""

import os
import subprocess
import sys

from services import answers  # bin/services.py, beside this script

PG_URL = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal")
BROKER_URLS = os.environ.get(
    "TEST_BROKER_URL", "redis://127.0.0.1:6379/15,redis://127.0.0.1:6379/13"
).split(",")
# Redis databases the tests of the shared cache (tests/portal/test_shared_cache.py) may empty.
CACHE_URLS = os.environ.get(
    "TEST_CACHE_URL", "redis://127.0.0.1:6379/14,redis://127.0.0.1:6379/12"
).split(",")


def workers(args: list[str]) -> list[str]:
    """pytest-xdist's options: as many workers as Redis database pairs, at most one per core, none
    where the arguments choose (-n, -p no:xdist, --pdb) or xdist is not installed."""
    count = min(len(BROKER_URLS), len(CACHE_URLS), os.cpu_count() or 1)
    chosen = {"--numprocesses", "no:xdist", "--pdb", "--collect-only", "--co"}
    if count < 2 or chosen & set(args) or any(a.startswith("-n") for a in args):
        return []
    try:
        import xdist  # noqa: F401
    except ImportError:
        print("pytest-xdist is not installed: one process (pip install -r requirements-dev.txt)")
        return []
    # loadgroup: tests spread one at a time, except those of a group (tests/conftest.py's
    # pytest_collection_modifyitems), which share a costly fixture and run in one worker.
    return ["-n", str(count), "--dist", "loadgroup"]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    for name, urls in (
        ("PostgreSQL", [PG_URL]),
        ("Redis", BROKER_URLS),
        ("Redis for the shared cache", CACHE_URLS),
    ):
        for url in urls:
            state = "used" if answers(url) else "NOT REACHABLE: tests that need it will skip"
            print(f"{name} at {url}: {state}")
    if answers(PG_URL):
        env["DATABASE_URL"] = PG_URL
    if all(map(answers, BROKER_URLS)):
        env["CELERY_BROKER_URL"] = BROKER_URLS[0]  # the first worker's, and a lone process's
        env["TEST_BROKER_URLS"] = ",".join(BROKER_URLS)
    # The suite runs on each process's own cache; the shared cache's tests give theirs to the
    # servers they start.
    for name in ("CACHE_URL", "TEST_CACHE_URL", "TEST_CACHE_URLS"):
        env.pop(name, None)
    if all(map(answers, CACHE_URLS)):
        env["TEST_CACHE_URL"] = CACHE_URLS[0]
        env["TEST_CACHE_URLS"] = ",".join(CACHE_URLS)
    env.setdefault("MEDIA_ROOT", os.path.abspath("var/test-media"))
    return env


def main() -> int:
    args = sys.argv[1:]
    env = environment()
    return subprocess.call([sys.executable, "-m", "pytest", *workers(args), *args], env=env)


if __name__ == "__main__":
    sys.exit(main())
