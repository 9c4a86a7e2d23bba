"""Caching of rendered round tables and exports, invalidated when a round's data changes.

Every cache key carries the round's `cache_token`; `invalidate_round` replaces the token, so
every cached table, fragment and export of that round is stale at once, in every process
(the token lives in the database, the cache may be per process). Published data changes
only on publication, so the write side calls `invalidate_round(round_key)` from its
publish step; editing a price in the admin calls it too.

With a cache shared by every process (CACHE_URL), a page is rendered once for all of them; each
request reads the round's generation there (current_round), which a change of the round replaces,
and the page's body.

What is cached is public data only (leaderboard.access.public, the same for every viewer), so the
keys need no viewer; answers that depend on who asks (the API with credentials) are not cached. Every key
carries the language it was rendered in (portal/language.py): a page in Chinese is a copy of its own.
"""

import hashlib
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache
from django.db import transaction
from django.utils import timezone, translation

from .models import Round, new_cache_token

# A safety net: even without an invalidation a cached page lives at most this long.
TIMEOUT = getattr(settings, "LEADERBOARD_CACHE_SECONDS", 3600)
# How long a process trusts the round (and its token) it read last: a warm round page then needs
# no database query. With a shared cache (CACHE_URL) the copy is also checked against the round's
# generation there at each request, so a change in any process shows at the next request. With
# each process's own cache, a publication in another process shows within this time; in the
# process that published, at once. A trick kept for its figure (docs/architecture.md, issue 35): read
# at every request instead, the warm round page gave 0.30x the requests/s at 2.4x the CPU a request
# (bench/leaderboard.py --against, one run), below the target of half the static file's requests/s.
ROUND_MEMO_SECONDS = getattr(settings, "LEADERBOARD_ROUND_MEMO_SECONDS", 1.0)
_memo: dict[str, tuple[float, Round, str | None]] = {}
_memo_lock = threading.Lock()


def cache():
    return caches[getattr(settings, "LEADERBOARD_CACHE", "default")]


def shared(c=None) -> bool:
    """Whether the cache is one for every process (Redis), not this process's own memory."""
    return not isinstance(c or cache(), (LocMemCache, DummyCache))


def _generation_key(round_key: str) -> str:
    return f"lb:round:{round_key}"


def current_round(round_key: str) -> Round | None:
    """The round with its current cache token, read from the database at most once per
    ROUND_MEMO_SECONDS in this process, and again whenever the shared cache says it changed
    (a warm round page then costs no query)."""
    c = cache()
    # Read before the database, so that a change made after this read is seen at the next request.
    generation = c.get(_generation_key(round_key)) if shared(c) else None
    now = time.monotonic()
    hit = _memo.get(round_key)
    if hit is not None and now - hit[0] < ROUND_MEMO_SECONDS and hit[2] == generation:
        return hit[1]
    round_ = Round.objects.filter(key=round_key).first()
    with _memo_lock:
        if round_ is None:
            _memo.pop(round_key, None)
        else:
            _memo[round_key] = (now, round_, generation)
    return round_


def invalidate_round(round_key: str) -> None:
    """Drop every cached table and export of the round (call it after publishing or withdrawing)."""
    Round.objects.filter(key=round_key).update(
        cache_token=new_cache_token(), changed_at=timezone.now()
    )
    forget_round(round_key)


def forget_round(round_key: str) -> None:
    """Read the round from the database at its next page, in this process and, with a shared
    cache, in every process (it changed)."""
    with _memo_lock:
        _memo.pop(round_key, None)
    c = cache()
    if shared(c):
        # Once the change is committed: another process reading the round sooner would keep the old row.
        transaction.on_commit(lambda: c.set(_generation_key(round_key), new_cache_token(), None))


def key(round_: Round, kind: str, *parts: str) -> str:
    """A cache key for something derived from `round_`'s published data."""
    digest = hashlib.sha1("\x1f".join(parts).encode()).hexdigest() if parts else "-"
    return f"lb:{kind}:{round_.key}:{round_.cache_token}:{translation.get_language()}:{digest}"


def catalogue_key(kind: str, tokens: list[str], *parts: str) -> str:
    """A cache key for something derived from every round (the progress chart)."""
    digest = hashlib.sha1("\x1f".join([*tokens, "|", *parts]).encode()).hexdigest()
    return f"lb:{kind}:{translation.get_language()}:{digest}"


def get(cache_key: str):
    """What is kept under `cache_key`, or None."""
    return cache().get(cache_key)


def put(cache_key: str, value) -> None:
    cache().set(cache_key, value, TIMEOUT)


def get_or_set(cache_key: str, compute):
    value = get(cache_key)
    if value is None:
        value = compute()
        put(cache_key, value)
    return value
