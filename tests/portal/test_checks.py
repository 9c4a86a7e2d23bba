"""The system checks for what a deployment can get wrong (portal/checks.py)."""

from portal import checks


def ids(problems):
    return [problem.id for problem in problems]


def test_embedded_database_broker_and_cache_are_flagged_only_with_debug_off(settings, monkeypatch):
    database = settings.DATABASES["default"]
    monkeypatch.setitem(database, "ENGINE", "django.db.backends.sqlite3")
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CACHE_URL = ""
    settings.DEBUG = True
    assert checks.embedded_services_off_debug() == []
    settings.DEBUG = False
    assert ids(checks.embedded_services_off_debug()) == [
        "portal.W002",
        "portal.W003",
        "portal.W006",
    ]
    monkeypatch.setitem(database, "ENGINE", "django.db.backends.postgresql")
    settings.CELERY_BROKER_URL = "redis://:pw@redis:6379/0"
    settings.CACHE_URL = "redis://:pw@redis:6379/1"
    assert checks.embedded_services_off_debug() == []


def test_a_media_root_that_cannot_be_written_is_an_error(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    assert checks.media_root_writable() == []
    (tmp_path / "a-file").write_text("x")
    settings.MEDIA_ROOT = (
        tmp_path / "a-file" / "media"
    )  # not even root can make a folder inside a file
    problems = checks.media_root_writable()
    assert ids(problems) == ["portal.E001"] and "cannot be written" in problems[0].msg


def test_mlperf_logging_at_another_version_than_pinned_is_flagged(tmp_path):
    from submissions.checking.rules.mlperf import library

    assert checks.mlperf_logging_pinned() == []  # as installed here, from requirements.txt
    other = tmp_path / "requirements.txt"
    other.write_text("Django==5.2.19\nmlperf-logging==0.0.1  # an old one\n")
    assert checks.pinned_version("mlperf-logging", other) == "0.0.1"
    problems = checks.mlperf_logging_pinned(requirements=other)
    assert ids(problems) == ["portal.W004"] and library.version() in problems[0].msg
    assert problems[0].hint == "pip install mlperf-logging==0.0.1"


def test_the_log_scanner_not_built_is_flagged(monkeypatch):
    from submissions.checking.logs import leave_out

    monkeypatch.setattr(leave_out, "_scan", None)
    assert ids(checks.log_scanner_built()) == ["portal.W001"]


def test_a_reference_check_limit_shorter_than_the_agent_s_own_is_flagged(settings):
    assert checks.reference_check_limits() == []  # the defaults: 120 s window, 420 s limit
    settings.REFCHECK_JOB_LIMIT_S = 200
    problems = checks.reference_check_limits()
    assert ids(problems) == ["portal.W005"] and "270" in problems[0].hint


def test_a_cache_on_the_broker_s_redis_server_is_flagged(settings):
    settings.CELERY_BROKER_URL = "redis://redis.example:6379/0"
    settings.CACHE_URL = "redis://:pw@redis.example:6379/1"
    assert ids(checks.cache_apart_from_broker()) == ["portal.W007"]
    settings.CACHE_URL = "redis://:pw@redis.example:6380/0"
    assert checks.cache_apart_from_broker() == []
