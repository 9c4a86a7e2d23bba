"""Shared fixtures: a private media folder per test, the shipped rounds, eager Celery, the cast of users."""

import fcntl
import lzma
import os
import shutil
from pathlib import Path

import pytest

from .flush_by_delete import flush_by_delete  # noqa: F401 (the one patch of Django, measured there)

# The repository's root, and the shared MLPerf rounds beside it (../shared/mlperf unless MLPERF_SHARED_DIR).
ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))


def c_scanner():
    """The log parser's C scanner (_scan.c); the test skips where it is not built, and fails with
    REQUIRE_C_SCANNER set (CI)."""
    from submissions.checking.logs import leave_out

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


FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Users' passwords hashed with MD5 in tests: Django's PBKDF2 costs about a second a user on a busy
    machine, and the cast makes six."""
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture(autouse=True)
def api_rates(monkeypatch):
    """The API's throttling, out of the way: a test (or its live server) may send hundreds of
    requests from one address. tests/leaderboard/test_leaderboard_api.py sets low rates to test it."""
    from rest_framework.throttling import SimpleRateThrottle

    rates = {"anon": "100000/minute", "user": "100000/minute"}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
    return rates


@pytest.fixture(autouse=True)
def page_rates(settings):
    """The pages' and sign-ins' rate limits (portal/ratelimit.py), out of the way likewise;
    tests/portal/test_abuse.py and test_sign_in_limits.py test them."""
    settings.PAGE_THROTTLE_ANON = settings.PAGE_THROTTLE_USER = "100000/minute"
    settings.LOGIN_THROTTLE_ADDRESS = settings.LOGIN_THROTTLE_ACCOUNT = "100000/minute"


@pytest.fixture
def eager():
    """Run Celery tasks in-process (the real broker and worker are used in tests marked `services`)."""
    from portal.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


def pytest_configure(config):
    """A pytest-xdist worker's own per-process resources (bin/run_tests.py starts one worker per Redis
    database pair): its Celery broker's Redis database (each test's `celery worker` consumes there, and
    tests/worker.py's purge_broker empties it), the shared cache's Redis database (its tests empty it),
    the media folder its subprocesses inherit, and without Redis the file-system broker's folders.
    pytest-django gives it its own test database and pytest its own tmp_path; its live servers and the
    processes the tests start take free ports."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    from django.conf import settings

    index = int(worker.removeprefix("gw"))
    for name, urls in (
        ("CELERY_BROKER_URL", "TEST_BROKER_URLS"),
        ("TEST_CACHE_URL", "TEST_CACHE_URLS"),
    ):
        if name not in os.environ:  # not reachable, or not asked for: the tests that need it skip
            continue
        own = os.environ.get(urls, "").split(",")
        if index >= len(own) or not own[index]:
            raise pytest.UsageError(
                f"xdist worker {worker} has no {name} of its own in {urls} ({os.environ.get(urls)!r}): "
                "run the tests with bin/run_tests.py, one worker per database named in TEST_BROKER_URL"
            )
        os.environ[name] = own[index]  # Celery reads CELERY_BROKER_URL before its own configuration
    settings.CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", settings.CELERY_BROKER_URL)
    media = Path(os.environ.get("MEDIA_ROOT", settings.MEDIA_ROOT)) / worker
    os.environ["MEDIA_ROOT"] = str(media)
    settings.MEDIA_ROOT = media
    from portal.celery import app

    folders = app.conf.broker_transport_options  # the embedded file-system broker's, under var/
    for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
        if key in folders:
            folders[key] = str(Path(folders[key]) / worker)
            os.makedirs(folders[key], exist_ok=True)


# Tests that share a costly fixture run in one xdist worker, which builds it once: the browser package's
# catalogue (three shared rounds ingested and published), and each module whose tests share a
# module-scoped one (a real worker or server, files unpacked from a round once).
# Elsewhere tests spread one by one. A module left off only costs time: each worker builds its own.
ONE_WORKER = (
    "tests/agent/test_agent_probes.py",
    "tests/browser/",
    "tests/checking/bundles/test_in_place.py",
    "tests/checking/bundles/test_layout.py",
    "tests/checking/pipeline/test_publication.py",
    "tests/checking/pipeline/test_workers.py",
    "tests/checking/rules/test_forged_clock.py",
    "tests/checking/rules/test_history_keeps_checked_runs.py",
    "tests/checking/rules/test_history_metadata_refusals.py",
    "tests/checking/rules/test_rules_real.py",
    "tests/checking/test_energy_v40.py",
    "tests/checking/test_systems_real.py",
    "tests/clients/test_portal_submit.py",
    "tests/leaderboard/test_accelerators.py",
    "tests/leaderboard/test_organisations.py",
    "tests/portal/test_abuse.py",
    "tests/portal/test_hostile_clients.py",
    "tests/portal/test_shared_cache.py",
    "tests/portal/test_static_files.py",
    "tests/portal/test_storage_s3.py",
    "tests/refchecks/test_refchecks_agent.py",
)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown where it is not installed
def pytest_xdist_make_scheduler(config, log):
    """bin/run_tests.py's --dist loadgroup, with ONE_WORKER as the groups: pytest-xdist 3.8.0 marks a
    test's group in its node id (item._nodeid), which pytest 9 no longer reads, so its own loadgroup
    split every group. Its scheduling by scope is kept (xdist's loadgroup is the same subclass): the
    largest groups first, then the other tests one by one."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return next((group for group in ONE_WORKER if nodeid.startswith(group)), nodeid)

    return OneWorkerGroups(config, log)


# Modules of tests that each wait a minute or more on real processes (workers killed, PostgreSQL cut, a full
# disk): collected first, so that pytest-xdist starts them right after the ONE_WORKER groups (it hands out the
# largest groups first, then single tests in the order collected) and a run does not end with one worker
# waiting on one of them while the other has nothing left to do.
LONGEST_FIRST = ("tests/portal/test_fault_recovery.py", "tests/portal/test_faults.py")


def pytest_collection_modifyitems(items):
    """Skips the whole-round comparisons unless WHOLE_ROUNDS=1, saying why
    (tests/checking/test_shared_rounds.py: each shared round ingested whole and mlperf-logging run over
    every log, about 6.5 minutes for the five on two cores; `make test-rounds` runs them, and CI after
    `make test`),
    and puts LONGEST_FIRST first; a test's database mode is written in its module (`pytest.mark.django_db`,
    with transaction=True where other processes or on_commit hooks read its writes), not decided here."""
    items.sort(
        key=lambda item: not item.nodeid.startswith(LONGEST_FIRST)
    )  # stable: the rest keep their order
    whole = os.environ.get("WHOLE_ROUNDS") == "1"
    for item in items:
        if item.get_closest_marker("whole_rounds") and not whole:
            item.add_marker(
                pytest.mark.skip(
                    reason="a whole shared round against mlperf-logging (6.5 min for the five); "
                    "run with WHOLE_ROUNDS=1 (make test-rounds)"
                )
            )


LIVE_ROUND = "training-v5.1"


@pytest.fixture
def rounds():
    """The round files, with the tests' live round: training-v5.1's rules taken live (history off), as a round
    open for submissions is, for the tests of what a live round checks, blocks, holds and publishes. The
    shipped v5.1 is imported history: tests of the published rounds use `published_rounds`."""
    from leaderboard.catalogue.rounds import load_all
    from leaderboard.models import Round

    loaded = {r.key: r for r in load_all()}
    Round.objects.filter(key=LIVE_ROUND).update(history=False)
    loaded[LIVE_ROUND].history = False
    return loaded


@pytest.fixture
def published_rounds():
    """The round files as shipped: every published round is imported history."""
    from leaderboard.catalogue.rounds import load_all

    return {r.key: r for r in load_all()}


@pytest.fixture
def cast():
    """The tests' people, one for every role, and their two organisations (make_cast below)."""
    return make_cast()


def make_cast() -> dict:
    """The tests' people, one for every role, and their two organisations; every password is "pw" and
    every address `<name>@example.org`:

    - "a": Acme (the synthetic bundles' submitter), "b": Globex, both Organisations;
    - member_a: a member of Acme, who uploads for it; admin_a: Acme's organisation admin;
    - member_b: a member of Globex, the other submitter;
    - reviewer: no one's member and not staff (make them reviewer of a round with
      `round.reviewers.add(cast["reviewer"])`);
    - staff: staff, a member of no organisation;
    - outsider: an account and nothing else;
    - anonymous: no account (Django's AnonymousUser).

    A test that needs someone else (an invited or removed member) adds them to this dict. The `cast`
    fixture makes them in the test's own database; the browser tests, whose live server shares one
    database across their package, make them once there (tests/browser/conftest.py)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import AnonymousUser

    from accounts.models import Membership, Organisation

    User = get_user_model()
    a = Organisation.objects.create(name="Acme")
    b = Organisation.objects.create(name="Globex")
    people = {
        name: User.objects.create_user(
            name, password="pw", email=f"{name}@example.org", is_staff=name == "staff"
        )
        for name in ("member_a", "admin_a", "member_b", "reviewer", "staff", "outsider")
    }
    Membership.objects.create(user=people["member_a"], organisation=a)
    Membership.objects.create(user=people["admin_a"], organisation=a, role=Membership.Role.ADMIN)
    Membership.objects.create(user=people["member_b"], organisation=b)
    return {"a": a, "b": b, **people, "anonymous": AnonymousUser()}


def shared_tarball(name: str) -> Path:
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"the shared MLPerf round {path} is not here (set MLPERF_SHARED_DIR)")
    return path


# The shared rounds decompressed, for the tests that read files out of them (what the portal reads stays the
# .tar.xz: shared_tarball). Kept between runs; deleting the folder is always safe.
PLAIN_TARS = ROOT / "var" / "test-shared-rounds"


def shared_plain_tar(name: str) -> Path:
    """The shared round `name` (a .tar.xz) as a plain tar, decompressed once for every test process of this
    checkout and again when the tarball changes: the first process to ask writes it under a lock, the others
    wait for it. A run decompressed v4.0's 79 MB (5.3 s of CPU) about ten times before, and the other rounds
    as often: the 13 modules that read them took 143 s and 231 core-seconds, now 108-110 s and 167."""
    source = shared_tarball(name)
    stat = source.stat()
    stem = name.removesuffix(".xz")
    plain = PLAIN_TARS / f"{stem}.{stat.st_size}-{stat.st_mtime_ns}"
    if plain.is_file():
        return plain
    PLAIN_TARS.mkdir(parents=True, exist_ok=True)
    with open(PLAIN_TARS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released as the file closes
        if not plain.is_file():
            for old in PLAIN_TARS.glob(f"{stem}.*"):
                old.unlink()
            partial = plain.with_name(plain.name + ".partial")
            with lzma.open(source) as compressed, open(partial, "wb") as out:
                shutil.copyfileobj(compressed, out, 1 << 20)
            partial.rename(plain)
    return plain
