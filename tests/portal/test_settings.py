"""The settings module, read as a deployment reads it: from the environment; and what error pages show."""

import os
import subprocess
import sys

from django.test import RequestFactory
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

from ..conftest import ROOT

PRODUCTION = {  # the README's production settings
    "SECRET_KEY": "a-long-random-string-for-tests-only-" + "k" * 30,
    "ALLOWED_HOSTS": "results.example.org",
    "HTTPS": "1",
    "DATABASE_URL": "postgres://portal:pw@127.0.0.1:5432/portal",
    "CELERY_BROKER_URL": "redis://:pw@127.0.0.1:6379/0",
    "CACHE_URL": "redis://:pw@127.0.0.1:6380/0",  # a Redis server of its own (portal.W007)
}


def _run(code: str, tmp_path, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "DEBUG" and k not in PRODUCTION}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**base, "VAR_DIR": str(tmp_path), **env},
    )


def _settings(tmp_path, **env) -> str:
    return _run(
        "import portal.settings as s; print(s.DEBUG, s.SECRET_KEY)", tmp_path, **env
    ).stdout.split()


def test_debug_is_off_unless_set_on(tmp_path):
    assert _settings(tmp_path)[0] == "False"
    assert _settings(tmp_path, DEBUG="1")[0] == "True"


def test_without_a_secret_key_one_is_made_once_and_kept_private(tmp_path):
    first, again = _settings(tmp_path)[1], _settings(tmp_path)[1]
    assert first == again and len(first) >= 50
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0
    assert _settings(tmp_path, SECRET_KEY="given" * 12)[1] == "given" * 12


def test_the_cache_is_each_processs_own_unless_cache_url_names_a_redis(tmp_path):
    code = "import portal.settings as s; print(s.CACHES['default'])"
    assert "LocMemCache" in _run(code, tmp_path).stdout
    shared = _run(code, tmp_path, CACHE_URL="redis://:pw@127.0.0.1:6379/1").stdout
    assert "portal.backends.cache.RedisCache" in shared and "redis://:pw@127.0.0.1:6379/1" in shared
    wrong = _run(code, tmp_path, CACHE_URL="memcache://:pw@127.0.0.1:11211")
    assert wrong.returncode != 0 and "CACHE_URL: a memcache:// address" in wrong.stderr
    assert ":pw@" not in wrong.stderr


def test_the_deploy_check_is_clean_with_the_production_settings(tmp_path):
    check = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
    code = f"import subprocess, sys; sys.exit(subprocess.call({check!r}))"
    clean = _run(code, tmp_path, **PRODUCTION)
    assert clean.returncode == 0, clean.stderr
    assert "no issues" in clean.stdout
    plain_http = _run(code, tmp_path, **{**PRODUCTION, "HTTPS": "0"})
    assert plain_http.returncode != 0 and "security.W004" in plain_http.stderr  # the check can fail


def test_the_recovery_defaults_keep_the_bounds_the_fault_tests_assert(tmp_path):
    """The tests of recovery run their workers with short intervals (tests/worker.py QUICK_RECOVERY): the
    site's own must keep the bounds those tests assert. An upload the broker refused is queued by the first
    sweep after the broker's return (test_faults: within a minute); a killed worker's batch by the first sweep
    after its last beat expired (test_workers: finished within three minutes of the kill)."""
    code = "import portal.settings as s; print(s.LEASE_BEAT_S, s.LEASE_EXPIRY_S, s.SWEEP_EVERY_S)"
    beat, expiry, every = map(int, _run(code, tmp_path).stdout.split())
    assert every <= 30  # the other half minute for the worker to reconnect and ingest
    assert expiry + every <= 120  # the other minute for the rescuer to check what was left
    assert expiry >= 3 * beat  # a live process misses two beats before its lease looks dead


def test_the_budget_of_a_step_is_read_from_the_environment_and_a_bad_one_stops_start_up(tmp_path):
    code = "import portal.settings as s; print(s.TASK_MEMORY_BYTES, s.CHECK_MEMORY_BYTES, s.CHECK_CPU_S)"
    assert _run(code, tmp_path).stdout.split() == [str(4 * 1024**3), str(4 * 1024**3), "120"]
    assert _run(code, tmp_path, CHECK_MEMORY_BYTES="1000").stdout.split()[1] == "1000"
    for name, value in (("TASK_MEMORY_BYTES", str(64 << 20)), ("CHECK_CPU_S", "-1")):
        refused = _run(code, tmp_path, **{name: value})
        assert refused.returncode != 0 and name in refused.stderr, (name, refused.stderr[-300:])


def _error_page(request, **local_variables) -> str:
    try:
        broker = local_variables["broker"]  # noqa: F841 - a local the traceback shows
        raise ConnectionError("the broker did not answer")
    except ConnectionError:
        return ExceptionReporter(request, *sys.exc_info()).get_traceback_html()


def test_error_pages_mask_passwords_in_urls(settings):
    settings.DEBUG = True
    settings.CELERY_BROKER_URL = "redis://:broker-s3cret@redis.internal:6379/0"
    settings.ANALYTICS_ENDPOINT = "https://user:endpoint-s3cret@example.org/"
    settings.SEARCH_SERVICE = {"NAME": "x", "PASSWORD": "db-s3cret"}
    page = _error_page(RequestFactory().get("/"), broker=["amqp://guest:local-s3cret@rabbit//"])
    assert "redis.internal" in page and "example.org" in page  # the settings are shown...
    for secret in ("broker-s3cret", "endpoint-s3cret", "db-s3cret", "local-s3cret"):
        assert secret not in page  # ...without their passwords
    plain = RequestFactory().get("/")
    plain.exception_reporter_filter = SafeExceptionReporterFilter()
    assert "broker-s3cret" in _error_page(plain, broker=[])  # what Django's own filter shows
