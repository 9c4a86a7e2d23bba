"""Shared fixtures: a private media folder per test, the shipped rounds, eager Celery, users."""

import os
from pathlib import Path

import pytest

SHARED = Path(
    os.environ.get("MLPERF_SHARED_DIR", Path(__file__).resolve().parents[2] / "shared" / "mlperf")
)


def c_scanner():
    """The log parser's C scanner (_scan.c); the test skips where it is not built, and fails with
    REQUIRE_C_SCANNER set (CI)."""
    from submissions.logs import leave_out

    if leave_out._scan is None:
        reason = "the C scanner is not built (bin/build_scan.py)"
        if os.environ.get("REQUIRE_C_SCANNER"):
            pytest.fail(reason)
        pytest.skip(reason)
    return leave_out._scan


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def eager():
    """Run Celery tasks in-process (the real broker and worker are used in tests marked `services`)."""
    from portal.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def rounds(transactional_db):
    from leaderboard.rounds import load_all

    return {r.key: r for r in load_all()}


@pytest.fixture
def users(transactional_db):
    from django.contrib.auth import get_user_model

    User = get_user_model()
    return {
        "owner": User.objects.create_user("owner", password="pw"),
        "outsider": User.objects.create_user("outsider", password="pw"),
        "reviewer": User.objects.create_user("reviewer", password="pw", is_staff=True),
    }


def shared_tarball(name: str) -> Path:
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"the shared MLPerf round {path} is not here (set MLPERF_SHARED_DIR)")
    return path
