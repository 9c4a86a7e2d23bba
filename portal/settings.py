"""Settings for the portal, read from the environment.

With nothing set the portal runs embedded: SQLite and files under ./var, and a Celery
transport on the file system. Set DATABASE_URL and CELERY_BROKER_URL to run on
PostgreSQL and Redis. A bad value stops start-up with the variable's name.
"""

import os
import re
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
# Off unless set on (`make run` sets it for the embedded demo): its error pages show code and settings.
DEBUG = env.bool("DEBUG", default=False)


def _local_secret_key() -> str:
    """A key made on first start and kept in VAR_DIR (readable by its owner only), for a single machine
    that does not set SECRET_KEY; several machines must share one SECRET_KEY."""
    path = VAR_DIR / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        import secrets

        VAR_DIR.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".secret_key.{os.getpid()}")
        with os.fdopen(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
            out.write(secrets.token_urlsafe(50))
        try:
            os.link(draft, path)  # whole or not at all; another process's key, if it made one first
        except FileExistsError:
            pass
        finally:
            draft.unlink()
        return path.read_text().strip()


# Sessions and password resets are signed with it.
SECRET_KEY = env.str("SECRET_KEY", default="") or _local_secret_key()
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",  # login throttling: see AXES_* below
    "csp",  # the Content-Security-Policy header: see CONTENT_SECURITY_POLICY below
    "portal",
    "accounts",
    "audit",
    "leaderboard",
    "submissions",
    "notifications",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",  # every answer, static files included
    # Static files before sessions and the rest: a stylesheet needs none of them (portal/backends/staticstorage.py).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Pages and streamed downloads gzipped for clients that take it (whitenoise's files come gzipped
    # already; so does the cached round page, which this leaves alone). Django >= 4.2 pads each answer
    # against BREACH ("Heal The Breach"), which matters because pages carry CSRF tokens.
    "django.middleware.gzip.GZipMiddleware",
    # The language of the answer (portal/language.py): ?lang=, the cookie, Accept-Language. Before any
    # answer is made, so that refusals below speak it too.
    "portal.language.LanguageMiddleware",
    "portal.middleware.RefuseNulMiddleware",  # before any view looks a NUL up in PostgreSQL
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A signed-in user's language choice kept for their notifications (portal/language.py).
    "portal.language.RememberLanguageMiddleware",
    "portal.ratelimit.PageRateLimitMiddleware",  # who asks: after authentication
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: answers a locked-out login
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",  # LANGUAGE_CODE for <html lang>
                "portal.language.switcher",  # the links to this page in each language
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "notifications.context_processors.unread",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'portal.sqlite3'}"),
}
# Keep connections between requests and tasks: a new PostgreSQL connection per Celery task
# cost more than the check itself (Celery needs CELERY_DB_REUSE_MAX too, below). Health checks
# drop a connection the server closed.
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=300))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the worker share the file: wait for locks instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {}).update(timeout=30, transaction_mode="IMMEDIATE")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The site reads in English and Simplified Chinese (issue 37): the catalogue is locale/zh_Hans, compiled by
# `make setup` (manage.py compilemessages); which language a request gets is portal/language.py's.
LANGUAGE_CODE = "en-gb"
LANGUAGES = [("en-gb", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_NAME = "lang"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "leaderboard.staticfinders.PlotlyFinder",  # vendor/plotly.min.js from the installed plotly package
]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "static")))
# Files not collected are served from the finders under their plain names (tests, make run).
WHITENOISE_USE_FINDERS = env.bool("WHITENOISE_USE_FINDERS", default=True)
try:  # whitenoise warns at every start when the folder is missing
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
except OSError:
    pass
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))
# Bundles are kept through Django's storage API: files under MEDIA_ROOT, or an S3-compatible bucket (django-storages)
# when S3_BUCKET is set. MEDIA_ROOT still holds, on local disk, the parts of chunked uploads and the work folders
# of bundles being checked (a worker copies a bucket's bundle there to read it).


def s3_storage(environ) -> dict | None:
    """The storage of bundles in the bucket S3_BUCKET (portal/backends/bundlestorage.py), or None where it is not set.
    A function of the environment, so that the tests point it at their own S3 server as a deployment does."""
    if not environ.get("S3_BUCKET"):
        return None
    return {
        "BACKEND": "portal.backends.bundlestorage.S3BundleStorage",
        "OPTIONS": {
            "bucket_name": environ["S3_BUCKET"],
            "location": environ.get("S3_PREFIX", ""),
            "endpoint_url": environ.get("S3_ENDPOINT_URL") or None,
            "region_name": environ.get("S3_REGION") or None,
            "access_key": environ.get("S3_ACCESS_KEY_ID") or None,
            "secret_key": environ.get("S3_SECRET_ACCESS_KEY") or None,
        },
    }


STORAGES = {
    "default": s3_storage(os.environ) or {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # collectstatic writes hashed, compressed copies; whitenoise serves them, cached for a year.
    "staticfiles": {"BACKEND": "portal.backends.staticstorage.StaticStorage"},
}
# Submitters log in here (the admin's login takes staff only).
LOGIN_URL = "login"

# The Content-Security-Policy of every page (django-csp): scripts from this site's own files only (no
# inline script, no eval), nothing from another site, no frames, no plugins, forms posted here only.
# No inline style either (no <style> element, no style attribute): the pages' styles are the site's
# stylesheets, and plotly.js adds its rules to one of them through the CSSOM (static/js/charts.js), which
# the policy does not govern, as it does not govern the styles scripts set on elements (element.style).
# The API's documentation page (Redoc) sets a policy of its own (portal/api/router.py ApiDocs).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

# Login throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one username from one
# address, that username is refused from that address for LOGIN_COOLOFF_MINUTES (429), the right
# password included; a success resets the count. By username and address together, so that nobody
# locks another user out from elsewhere. The address is the API's (portal/ratelimit.client_address).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_CLIENT_IP_CALLABLE = "portal.ratelimit.client_address"
LOGIN_REDIRECT_URL = "/submissions/"
LOGOUT_REDIRECT_URL = "/"

# Uploads stream to disk past this size instead of being held in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# Mail (receipts, password resets, notifications) goes to the SMTP server EMAIL_URL names
# (smtp://user:password@host:587, or smtp+tls://...). Without it, each message is written as an .eml file
# under VAR_DIR/mail (EMAIL_FILE_PATH) and logged in one line (portal/backends/mailfiles.py).
_email = env.email_url("EMAIL_URL", default="smtp://")
EMAIL_BACKEND = (
    _email["EMAIL_BACKEND"]
    if env.str("EMAIL_URL", default="")
    else "portal.backends.mailfiles.EmlFileBackend"
)
EMAIL_FILE_PATH = Path(env.str("EMAIL_FILE_PATH", default=str(VAR_DIR / "mail")))
EMAIL_HOST = _email["EMAIL_HOST"] or "localhost"
EMAIL_PORT = _email["EMAIL_PORT"] or 25
EMAIL_HOST_USER = _email["EMAIL_HOST_USER"] or ""
EMAIL_HOST_PASSWORD = _email["EMAIL_HOST_PASSWORD"] or ""
EMAIL_USE_TLS = _email.get("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = _email.get("EMAIL_USE_SSL", False)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="portal@localhost")
# A notification mail that the server refused is tried again after this, then twice as long each time
# (at most an hour apart): notifications/tasks.py.
NOTIFY_MAIL_RETRY_S = env.int("NOTIFY_MAIL_RETRY_S", default=30)
# A recipient gets at most one notification mail this often: what comes in between (the deadline rush) waits
# for the end of the window and goes as one digest (notifications/tasks.py).
NOTIFY_DIGEST_WINDOW_S = env.int("NOTIFY_DIGEST_WINDOW_S", default=60)
# Webhooks may POST to loopback, private and link-local addresses only where this is set (the tests' receivers
# on 127.0.0.1): otherwise a webhook's URL could make the workers ask the site's own network (SSRF).
NOTIFY_WEBHOOKS_TO_INTERNAL = env.bool("NOTIFY_WEBHOOKS_TO_INTERNAL", default=False)
# The site's address as notification mails write their links (a worker has no request to read it from).
SITE_URL = env.str("SITE_URL", default="http://localhost:8000")

# Where the three real MLPerf rounds live (tarballs); loaded by `make run` when present.
MLPERF_SHARED_DIR = Path(
    env.str("MLPERF_SHARED_DIR", default=str(BASE_DIR.parent / "shared" / "mlperf"))
)

# Hard limits for an uploaded bundle (see submissions/checking/bundles/unpack.py).
BUNDLE_MAX_TOTAL_BYTES = env.int("BUNDLE_MAX_TOTAL_BYTES", default=4 * 1024**3)
BUNDLE_MAX_FILES = env.int("BUNDLE_MAX_FILES", default=20_000)
BUNDLE_MAX_FILE_BYTES = env.int("BUNDLE_MAX_FILE_BYTES", default=1024**3)
BUNDLE_MAX_RATIO = env.float("BUNDLE_MAX_RATIO", default=200.0)
# The largest bundle taken in one upload, counted as it is stored (a larger declared Content-Length is refused
# before the body is read). The command line's imports have no such cap.
UPLOAD_MAX_BYTES = env.int("UPLOAD_MAX_BYTES", default=8 * 1024**3)
# A chunked upload that no part has reached for this long is dropped with its bytes (its client gave up).
UPLOAD_EXPIRY_DAYS = env.int("UPLOAD_EXPIRY_DAYS", default=7)
# Chunked uploads open at once, per member and per organisation: each may hold UPLOAD_MAX_BYTES on disk
# until it expires (without a cap, 50 x 8 GiB were taken from one member).
UPLOAD_OPEN_PER_MEMBER = env.int("UPLOAD_OPEN_PER_MEMBER", default=4)
UPLOAD_OPEN_PER_ORGANISATION = env.int("UPLOAD_OPEN_PER_ORGANISATION", default=12)
# A failed submission's bundle (and work folder) is deleted this long after it failed; the submission stays.
FAILED_BUNDLE_RETENTION_DAYS = env.int("FAILED_BUNDLE_RETENTION_DAYS", default=30)

# Celery. Embedded: a file-system transport under ./var, so no server is needed.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=30 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 30
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Celery closes the database connections after every task unless this is set (it then closes them
# every N tasks): submissions/checking/tasks.py instead drops them as Django does between requests, and after a failed task.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
# A check of one run is bounded: a hostile log must not hold a worker.
CHECK_SOFT_TIME_LIMIT = env.int("CHECK_SOFT_TIME_LIMIT", default=120)
# The budget of a step that reads a bundle (submissions/checking/budget.py), set with setrlimit in the process
# that runs it and counted from what that process holds when the step starts: ingest and finalize each as a
# whole (TASK_*); each run's log, and each run's power logs, apiece (CHECK_*). A step past a limit ends with a
# finding that names the limit and the file it was reading, and the process goes on to its next task. 0: none.
# *_MEMORY_BYTES: address space a step may add (RLIMIT_AS). The largest log of the shared rounds (4 MB) added
# 310 MB to check with mlperf-logging's first import, 80 MB resident. Ingest starts a thread, for which glibc
# reserves 128 MiB of address space; with less, Python's Thread.start() waited for good: hence its floor.
# *_CPU_S: CPU seconds (RLIMIT_CPU), as the wall-time limits. TASK_OPEN_FILES: files a step may open beyond those
# its process holds (RLIMIT_NOFILE). Bytes written are counted against the BUNDLE_* limits as they are written.
TASK_MEMORY_BYTES = env.int("TASK_MEMORY_BYTES", default=4 * 1024**3)
CHECK_MEMORY_BYTES = env.int("CHECK_MEMORY_BYTES", default=TASK_MEMORY_BYTES)
TASK_CPU_S = env.int("TASK_CPU_S", default=CELERY_TASK_SOFT_TIME_LIMIT)
CHECK_CPU_S = env.int("CHECK_CPU_S", default=CHECK_SOFT_TIME_LIMIT)
TASK_OPEN_FILES = env.int("TASK_OPEN_FILES", default=256)
for _name in (
    "TASK_MEMORY_BYTES",
    "CHECK_MEMORY_BYTES",
    "TASK_CPU_S",
    "CHECK_CPU_S",
    "TASK_OPEN_FILES",
):
    if globals()[_name] < 0:
        raise ImproperlyConfigured(f"{_name} must be 0 (no limit) or more, not {globals()[_name]}")
if 0 < TASK_MEMORY_BYTES < 256 * 1024**2:
    raise ImproperlyConfigured(
        f"TASK_MEMORY_BYTES must be 0 (no limit) or at least 268435456 (256 MiB: ingest starts a thread, for "
        f"which glibc reserves 128 MiB), not {TASK_MEMORY_BYTES}"
    )
# Runs checked per task (each run is still checked, claimed and counted on its own). The v5.1
# round through 2 worker processes: 8 runs a task took 13-15 s, 16-48 took 11-12 s; once a run's
# check cost 2 ms, 48 took 0.15-0.3 s less of the workers' CPU than 24 (a task costs about 4 ms).
CHECK_BATCH_SIZE = env.int("CHECK_BATCH_SIZE", default=48)
# Recovery (submissions/checking/leases.py, pipeline/sweeper.py). A running task's process renews its lease every
# LEASE_BEAT_S; a lease not renewed for LEASE_EXPIRY_S means the process died, and its task is queued again.
# Work with no live lease, not updated for SWEEP_IDLE_S while nothing waits in the queues, was lost and is
# queued again; anything not updated for SWEEP_OLDER_THAN_S is, whatever the queues say. After
# SWEEP_MAX_ATTEMPTS a submission fails with the reason.
# An ingest opens a bundle only with UNPACK_SPACE_FACTOR times its size free under MEDIA_ROOT, beyond
# DISK_RESERVE_BYTES; else (and on a full disk) it waits DISK_WAIT_S and tries again.
UNPACK_SPACE_FACTOR = env.int("UNPACK_SPACE_FACTOR", default=4)
DISK_RESERVE_BYTES = env.int("DISK_RESERVE_BYTES", default=256 * 1024 * 1024)
DISK_WAIT_S = env.int("DISK_WAIT_S", default=30)
LEASE_BEAT_S = env.int("LEASE_BEAT_S", default=15)
LEASE_EXPIRY_S = env.int("LEASE_EXPIRY_S", default=60)
SWEEP_EVERY_S = env.int("SWEEP_EVERY_S", default=30)
SWEEP_IDLE_S = env.int("SWEEP_IDLE_S", default=60)
SWEEP_OLDER_THAN_S = env.int("SWEEP_OLDER_THAN_S", default=CELERY_TASK_TIME_LIMIT + 60)
SWEEP_MAX_ATTEMPTS = env.int("SWEEP_MAX_ATTEMPTS", default=3)
# Rounds whose publication minute has come are published this often (so within the minute).
PUBLISH_EVERY_S = env.int("PUBLISH_EVERY_S", default=20)
CELERY_BEAT_SCHEDULE = {
    "sweep": {"task": "submissions.tasks.sweep", "schedule": float(SWEEP_EVERY_S)},
    "publish-due-rounds": {
        "task": "submissions.tasks.publish_due_rounds",
        "schedule": float(PUBLISH_EVERY_S),
    },
    "purge-failed-bundles": {"task": "submissions.tasks.purge_failed_bundles", "schedule": 3600.0},
    "purge-stale-uploads": {"task": "submissions.tasks.purge_stale_uploads", "schedule": 3600.0},
    # Deadlines, review phases, and notifications or mails an outage left behind (notifications/tasks.py).
    "notifications-clock": {"task": "notifications.clock", "schedule": 60.0},
}
# Steps of a whole submission go on "ingest", batches of run checks on "checks". finalize is such a
# step: on "checks" it waited behind every batch queued after its submission's last one, so a
# round's submissions all finalized at the very end. Beat's own tasks go on "clock", which a worker of
# its own consumes: on "ingest" the sweeper and the publication minute waited behind a rush's uploads.
# The names are the tasks' own (name= in submissions/*/tasks.py), kept from when all lived in one module.
CELERY_TASK_ROUTES = {
    "submissions.tasks.sweep": {"queue": "clock"},
    "submissions.tasks.publish_due_rounds": {"queue": "clock"},
    "submissions.tasks.purge_failed_bundles": {"queue": "clock"},
    "submissions.tasks.purge_stale_uploads": {"queue": "clock"},
    "notifications.clock": {"queue": "clock"},
    "submissions.tasks.revalidate": {"queue": "ingest"},
    "submissions.tasks.ingest": {"queue": "ingest"},
    "submissions.tasks.import_round": {"queue": "ingest"},
    "submissions.tasks.finalize": {"queue": "ingest"},
    "submissions.tasks.check_runs": {"queue": "checks"},
    # What the GPU agents (agent/) send back, by name: consumed by the portal's workers.
    "submissions.store_reference_check": {"queue": "checks"},
    "submissions.agent_heartbeat": {"queue": "checks"},
}
# Reference checks (submissions/refchecks/). A probe's timed window is at most REFCHECK_MAX_SECONDS; a job
# running longer than REFCHECK_JOB_LIMIT_S (the window, the model's build and the warm-up), or whose agent
# sent no heartbeat for AGENT_OFFLINE_AFTER_S, is sent again, up to REFCHECK_MAX_ATTEMPTS times, then fails
# with the reason. Agents beat every AGENT_HEARTBEAT_S (theirs: 15 s by default), so 90 s is six missed beats.
REFCHECK_MAX_SECONDS = env.float("REFCHECK_MAX_SECONDS", default=120.0)
REFCHECK_JOB_LIMIT_S = env.float("REFCHECK_JOB_LIMIT_S", default=REFCHECK_MAX_SECONDS + 300)
REFCHECK_MAX_ATTEMPTS = env.int("REFCHECK_MAX_ATTEMPTS", default=3)
AGENT_OFFLINE_AFTER_S = env.float("AGENT_OFFLINE_AFTER_S", default=90.0)
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = Path(env.str("BROKER_DIR", default=str(VAR_DIR / "broker")))
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(
            _broker_dir / "control"
        ),  # kombu's default is ./control, wherever it runs
        "store_processed": False,
        "polling_interval": 0.1,  # seconds between looks at the folder; kombu's 1 s made each hand-off wait
    }
else:
    # Redis: a task not acknowledged within this time is delivered again (acks_late).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT + 60}

# Served over HTTPS (behind a proxy that sets X-Forwarded-Proto when TRUST_X_FORWARDED_PROTO is on): redirect
# plain HTTP, secure cookies, HSTS. `manage.py check --deploy` with the README's production settings is clean.
HTTPS = env.bool("HTTPS", default=False)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = LANGUAGE_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=365 * 24 * 3600 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=HTTPS)
if env.bool("TRUST_X_FORWARDED_PROTO", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Error pages and error mails hide passwords written inside URLs too (CELERY_BROKER_URL, in locals).
DEFAULT_EXCEPTION_REPORTER_FILTER = "portal.errors.SecretsFilter"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}

# The cache: rendered round pages, exports and API answers (leaderboard/cache.py), and the API's throttle
# counts. Unset, each process keeps its own in memory, which is all one process needs (`make run`). A site
# with several web processes sets CACHE_URL=redis://...: one cache for every web process and worker, so a
# client's requests are counted together and a publication in one process shows at once in all.
CACHE_URL = env.str("CACHE_URL", default="")


def _cache(url: str) -> dict:
    if not url:
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    scheme = url.partition("://")[0]
    if scheme in ("redis", "rediss"):
        return {"BACKEND": "portal.backends.cache.RedisCache", "LOCATION": url}
    raise ImproperlyConfigured(
        f"CACHE_URL: a {scheme or 'plain'}:// address is not a cache this portal takes; "
        "use redis://[:password@]host:port/db (or rediss://), or leave it unset."
    )


CACHES = {"default": _cache(CACHE_URL)}

# Pages and exports a client may ask for (portal/ratelimit.py): anonymous ones per address, signed-in
# ones per user; "N/second", "/minute", "/hour" or "/day".
PAGE_THROTTLE_ANON = env.str("PAGE_THROTTLE_ANON", default="120/minute")
PAGE_THROTTLE_USER = env.str("PAGE_THROTTLE_USER", default="600/minute")
# Sign-ins (POSTs of the sign-in form) per address and per account named, whatever the address; apart
# from page views, which never count against signing in (portal/ratelimit.py sign_in_wait).
LOGIN_THROTTLE_ADDRESS = env.str("LOGIN_THROTTLE_ADDRESS", default="30/minute")
LOGIN_THROTTLE_ACCOUNT = env.str("LOGIN_THROTTLE_ACCOUNT", default="10/minute")
for _name in (
    "PAGE_THROTTLE_ANON",
    "PAGE_THROTTLE_USER",
    "LOGIN_THROTTLE_ADDRESS",
    "LOGIN_THROTTLE_ACCOUNT",
):
    if not re.fullmatch(r"\d+/(s|m|h|d)[a-z]*", globals()[_name]):
        raise ImproperlyConfigured(
            f"{_name}: {globals()[_name]!r} is not a rate; write e.g. 120/minute or 10/second."
        )

# The REST API v1 (portal/api/router.py): JSON, CSV (?format=csv) and the browsable API; the pages'
# filters; an OpenAPI schema. Throttling counts requests per client in the cache (in each process
# unless CACHE_URL names a shared one): anonymous clients by address, signed-in ones by user.
REST_FRAMEWORK = {
    "EXCEPTION_HANDLER": "portal.errors.api_exception_handler",
    # API tokens that users make and revoke in the site (accounts/), then the browser's session.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_SCHEMA_CLASS": "portal.api.schema.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # REST framework's own, with a JSON body nested too deep answered 400, not 500 (portal/api/parsers.py).
    "DEFAULT_PARSER_CLASSES": [
        "portal.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
        "leaderboard.api.renderers.CSVRenderer",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "portal.ratelimit.AnonThrottle",  # DRF's, counted atomically (portal/ratelimit.py)
        "portal.ratelimit.UserThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="120/minute"),
        "user": env.str("API_THROTTLE_USER", default="1200/minute"),
    },
    # An anonymous client is its address: the connection's, or behind N proxies that append to
    # X-Forwarded-For, the one the outermost of them saw. DRF's default (None) took the header as the
    # client sent it: a new X-Forwarded-For on each request was never throttled.
    "NUM_PROXIES": env.int("API_NUM_PROXIES", default=0),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Training results portal API",
    "DESCRIPTION": (BASE_DIR / "portal" / "api.md").read_text(),  # also the API root's "about"
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Operations grouped by what follows it (rounds, results, uploads ...), not all under "v1".
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # /api/docs/ serves Redoc from drf-spectacular-sidecar's static files, not from a CDN.
    "REDOC_DIST": "SIDECAR",
    "REDOC_UI_SETTINGS": {
        "theme": {
            "typography": {
                "fontFamily": "system-ui, sans-serif",
                "headings": {"fontFamily": "system-ui, sans-serif"},
            }
        }
    },
}

# Rendered round tables and exports are cached under each round's cache token
# (leaderboard/cache.py): a publication replaces the token, so no stale page is served.
LEADERBOARD_CACHE_SECONDS = env.int("LEADERBOARD_CACHE_SECONDS", default=3600)
