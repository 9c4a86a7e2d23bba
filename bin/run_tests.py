#!/usr/bin/env python
"""Run the test suite against PostgreSQL and Redis when they answer, else embedded.

Prints which services are used, so that a run without them says so instead of
passing silently; the tests that need them skip with that reason.
"""

import os
import subprocess
import sys

from services import answers  # bin/services.py, beside this script

PG_URL = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/portal")
REDIS_URL = os.environ.get("TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
# A Redis database the tests of the shared cache (tests/portal/test_shared_cache.py) may empty.
CACHE_URL = os.environ.get("TEST_CACHE_URL", "redis://127.0.0.1:6379/14")


def main() -> int:
    env = dict(os.environ)
    for name, url in (
        ("PostgreSQL", PG_URL),
        ("Redis", REDIS_URL),
        ("Redis for the shared cache", CACHE_URL),
    ):
        state = "used" if answers(url) else "NOT REACHABLE: tests that need it will skip"
        print(f"{name} at {url}: {state}")
    if answers(PG_URL):
        env["DATABASE_URL"] = PG_URL
    if answers(REDIS_URL):
        env["CELERY_BROKER_URL"] = REDIS_URL
    # The suite runs on each process's own cache; the shared cache's tests give theirs to the
    # servers they start.
    env.pop("CACHE_URL", None)
    env.pop("TEST_CACHE_URL", None)
    if answers(CACHE_URL):
        env["TEST_CACHE_URL"] = CACHE_URL
    env.setdefault("MEDIA_ROOT", os.path.abspath("var/test-media"))
    return subprocess.call([sys.executable, "-m", "pytest", *sys.argv[1:]], env=env)


if __name__ == "__main__":
    sys.exit(main())
