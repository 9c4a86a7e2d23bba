"""Caching of rendered round tables and exports, invalidated when a round's data changes.

Every cache key carries the round's `cache_token`; `invalidate_round` replaces the token, so
every cached table, fragment and export of that round is stale at once, in every process
(the token lives in the database, the cache may be per process). Published data changes
only on publication, so the write side calls `invalidate_round(round_key)` from its
publish step; editing a price in the admin calls it too.
"""

import hashlib
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.utils import timezone

from .models import Round, new_cache_token

# A safety net: even without an invalidation a cached page lives at most this long.
TIMEOUT = getattr(settings, "LEADERBOARD_CACHE_SECONDS", 3600)
# How long a process trusts the round (and its token) it read last: a warm round page then needs
# no database query. A publication from another process shows within this time; in the process
# that published, at once (invalidate_round forgets it).
ROUND_MEMO_SECONDS = getattr(settings, "LEADERBOARD_ROUND_MEMO_SECONDS", 1.0)
_memo: dict[str, tuple[float, Round]] = {}
_memo_lock = threading.Lock()


def current_round(round_key: str) -> Round | None:
    """The round with its current cache token, read at most once per ROUND_MEMO_SECONDS in this
    process (a warm round page then costs no query)."""
    now = time.monotonic()
    hit = _memo.get(round_key)
    if hit is not None and now - hit[0] < ROUND_MEMO_SECONDS:
        return hit[1]
    round_ = Round.objects.filter(key=round_key).first()
    with _memo_lock:
        if round_ is None:
            _memo.pop(round_key, None)
        else:
            _memo[round_key] = (now, round_)
    return round_


def cache():
    return caches[getattr(settings, "LEADERBOARD_CACHE", "default")]


def invalidate_round(round_key: str) -> None:
    """Drop every cached table and export of the round (call it after publishing or withdrawing)."""
    Round.objects.filter(key=round_key).update(
        cache_token=new_cache_token(), changed_at=timezone.now()
    )
    forget_round(round_key)


def forget_round(round_key: str) -> None:
    """Read the round from the database at its next page (it changed in this process)."""
    with _memo_lock:
        _memo.pop(round_key, None)


def key(round_: Round, kind: str, *parts: str) -> str:
    """A cache key for something derived from `round_`'s published data."""
    digest = hashlib.sha1("\x1f".join(parts).encode()).hexdigest() if parts else "-"
    return f"lb:{kind}:{round_.key}:{round_.cache_token}:{digest}"


def catalogue_key(kind: str, tokens: list[str], *parts: str) -> str:
    """A cache key for something derived from every round (the progress chart)."""
    digest = hashlib.sha1("\x1f".join([*tokens, "|", *parts]).encode()).hexdigest()
    return f"lb:{kind}:{digest}"


def get_or_set(cache_key: str, compute):
    c = cache()
    value = c.get(cache_key)
    if value is None:
        value = compute()
        c.set(cache_key, value, TIMEOUT)
    return value
