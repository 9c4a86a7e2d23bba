"""bin/run_tests.py run by a test (tests/test_stopped_run.py, tests/test_run_figures.py): on a folder of
the test's own, with no service answering, and with only the pytest plugins the test names (-p)."""

import os
import sys

from .conftest import ROOT


def command(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "bin" / "run_tests.py"), "-p", "no:cacheprovider", *args]


def environment(workers: int, **more: str) -> dict[str, str]:
    """`workers`: that many Redis databases, none answering, so that run_tests.py starts as many xdist
    workers (one: none); `more`: the test's own variables."""
    nowhere = ",".join(f"redis://127.0.0.1:9/{n}" for n in range(workers))
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST_"))},
        "TEST_DATABASE_URL": "postgres://nobody@127.0.0.1:9/nothing",
        "TEST_BROKER_URL": nowhere,
        "TEST_CACHE_URL": nowhere,
        # The plugins the venv installs (hypothesis, schemathesis, anyio) cost each of a run's processes
        # about 1 s of CPU to load, for tests that use none: the test names the ones it needs (-p).
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        **more,
    }
