"""System checks (`manage.py check`; also run by runserver and migrate) for what a deployment can get wrong.

Each has an id and a hint, as Django's own: the C scanner not built, the embedded database, broker or
per-process cache on a site with DEBUG off, a MEDIA_ROOT the portal cannot write, mlperf-logging at
another version than pinned, a reference-check job limit shorter than the agents' own, the cache on
the broker's Redis server.
"""

import re
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Error, Warning, register

REQUIREMENTS = Path(settings.BASE_DIR) / "requirements.txt"


@register()
def log_scanner_built(app_configs=None, **kwargs):
    from submissions.checking.logs import leave_out

    if leave_out._scan is not None:
        return []
    return [
        Warning(
            "The log parser's C scanner is not built: logs are checked with its Python twin, several times slower.",
            hint="Run `make setup` (or `python bin/build_scan.py`) where a C compiler is installed.",
            id="portal.W001",
        )
    ]


@register()
def embedded_services_off_debug(app_configs=None, **kwargs):
    if settings.DEBUG:
        return []
    problems = []
    if settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        problems.append(
            Warning(
                "DEBUG is off but the database is the embedded SQLite file: one writer at a time, on this machine only.",
                hint="Set DATABASE_URL to PostgreSQL, e.g. postgres://portal:<password>@db/portal.",
                id="portal.W002",
            )
        )
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        problems.append(
            Warning(
                "DEBUG is off but the task queue is the embedded file-system transport: workers on other machines "
                "cannot take work from it.",
                hint="Set CELERY_BROKER_URL to Redis, e.g. redis://:<password>@redis:6379/0.",
                id="portal.W003",
            )
        )
    if not settings.CACHE_URL:
        problems.append(
            Warning(
                "DEBUG is off but CACHE_URL is not set: each web process counts the API's throttling by itself "
                "(a client gets its rate once per process), and learns of a publication made in another "
                "process up to a second late.",
                hint="Set CACHE_URL to Redis, e.g. redis://:<password>@redis:6379/1.",
                id="portal.W006",
            )
        )
    return problems


@register()
def media_root_writable(app_configs=None, **kwargs):
    media = Path(settings.MEDIA_ROOT)
    try:
        media.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=media):
            pass
    except OSError as error:
        return [
            Error(
                f"MEDIA_ROOT ({media}) cannot be written: {error.strerror}. Uploads and checks store bundles there.",
                hint="Point MEDIA_ROOT at a folder the site's and the workers' user can write, shared by all of them.",
                id="portal.E001",
            )
        ]
    return []


def pinned_version(package: str, requirements: Path = REQUIREMENTS) -> str | None:
    """The version requirements.txt pins for a package (`name==version`), or None."""
    try:
        text = requirements.read_text()
    except OSError:
        return None
    found = re.search(rf"^{re.escape(package)}==([^\s#;]+)", text, re.MULTILINE | re.IGNORECASE)
    return found[1] if found else None


@register()
def mlperf_logging_pinned(app_configs=None, requirements: Path = REQUIREMENTS, **kwargs):
    from submissions.checking.rules.mlperf import library

    pinned, installed = pinned_version("mlperf-logging", requirements), library.version()
    if pinned is None or installed == pinned:
        return []
    return [
        Warning(
            f"mlperf-logging {installed or '(not installed)'} is installed; the portal's checks and their tests are "
            f"made for {pinned}, the version requirements.txt pins.",
            hint=f"pip install mlperf-logging=={pinned}",
            id="portal.W004",
        )
    ]


# An agent stops a job itself after max_seconds + its AGENT_GRACE_S (120 s by default) + 30 s.
AGENT_OWN_LIMIT_S = 150


@register()
def reference_check_limits(app_configs=None, **kwargs):
    """The portal sends a running job again after REFCHECK_JOB_LIMIT_S: sooner than the agent gives up on it,
    a slow but live job would run twice."""
    needed = settings.REFCHECK_MAX_SECONDS + AGENT_OWN_LIMIT_S
    if settings.REFCHECK_JOB_LIMIT_S >= needed:
        return []
    return [
        Warning(
            f"REFCHECK_JOB_LIMIT_S ({settings.REFCHECK_JOB_LIMIT_S:g} s) is shorter than an agent's own limit "
            f"for a job (REFCHECK_MAX_SECONDS + {AGENT_OWN_LIMIT_S} s = {needed:g} s): slow jobs are sent "
            "again while they still run.",
            hint=f"Set REFCHECK_JOB_LIMIT_S to at least {needed:g}, or leave it unset.",
            id="portal.W005",
        )
    ]


def _server(url: str) -> tuple[str, int] | None:
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        return None
    return (parts.hostname or "localhost", parts.port or 6379)


@register()
def cache_apart_from_broker(app_configs=None, **kwargs):
    """A cache needs a memory cap with LRU eviction (README), which on the broker's Redis server would
    evict queued tasks, or, without it, let pages fill the memory the broker needs."""
    cache = _server(settings.CACHE_URL)
    if cache is None or cache != _server(settings.CELERY_BROKER_URL):
        return []
    return [
        Warning(
            f"CACHE_URL and CELERY_BROKER_URL name the same Redis server ({cache[0]}:{cache[1]}).",
            hint="Run the cache on a Redis server of its own with a memory cap and LRU eviction "
            "(redis-server --maxmemory 1gb --maxmemory-policy allkeys-lru; README, Deployment); "
            "the broker's keeps noeviction.",
            id="portal.W007",
        )
    ]
