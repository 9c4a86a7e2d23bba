"""Rate limits of the pages and exports (the API has DRF's throttles, portal/settings.py REST_FRAMEWORK).

A client is the API's: a signed-in user by id, anyone else by address (the connection's, or the one
API_NUM_PROXIES proxies vouch for; rest_framework.throttling.BaseThrottle.get_ident). Its requests are
counted in fixed windows in the cache, one atomic increment each (shared by every process with
CACHE_URL), so a burst spread over processes passes no extra request. Past the rate a request is
answered 429 with Retry-After. Without a limit one client made the site render uncached pages at 19
requests a second and filled the cache with copies.
"""

import functools
import hashlib
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.urls import reverse
from django.utils.translation import gettext
from redis.exceptions import RedisError
from rest_framework.throttling import AnonRateThrottle, BaseThrottle, UserRateThrottle

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """ "120/minute" -> (120, 60): requests per period (second, minute, hour or day)."""
    count, period = rate.split("/")
    return int(count), PERIODS[period.strip()[0]]


def count(key: str, window_s: int) -> int:
    """This request's number in `key`'s window: one atomic increment (an add for the first)."""
    try:
        if cache.add(key, 1, window_s + 1):
            return 1
        return cache.incr(key)
    except ValueError:  # the window's count expired between the add and the increment
        cache.add(key, 1, window_s + 1)
        return 1
    except RedisError:  # the cache only counts: while it does not answer, nothing is refused
        return 0


def client_address(request) -> str:
    """The address a client is counted by, here, in the API's throttles and in login throttling
    (AXES_CLIENT_IP_CALLABLE): the connection's, or the one API_NUM_PROXIES proxies vouch for."""
    return BaseThrottle().get_ident(request)


def retry_after(request, scope: str, rate: str, now: float | None = None) -> int | None:
    """Seconds until `request`'s client may ask again, past `rate` in `scope`; None within it."""
    now = time.time() if now is None else now
    user = getattr(request, "user", None)
    who = (
        f"u{user.pk}"
        if user is not None and user.is_authenticated
        else BaseThrottle().get_ident(request)
    )
    return _counted(scope, who, rate, now)


def _counted(scope: str, who: str, rate: str, now: float) -> int | None:
    """Seconds until `who` may ask again, past `rate` in `scope`; None within it."""
    allowed, window_s = parse_rate(rate)
    window = int(now // window_s)
    if count(f"rl:{scope}:{who}:{window}", window_s) <= allowed:
        return None
    return max(1, int((window + 1) * window_s - now))


def sign_in_wait(request, now: float | None = None) -> int | None:
    """Seconds until `request`'s sign-in may be tried again; None when it may be now. Each sign-in
    (a POST of the form) counts once for its address (LOGIN_THROTTLE_ADDRESS) and once for the account
    it names (LOGIN_THROTTLE_ACCOUNT, whatever the address), apart from page views: a neighbour's
    browsing never refuses a sign-in. django-axes locks one account out of one address after its
    wrong passwords besides (portal/settings.py AXES_*)."""
    if request.method != "POST":
        return None
    now = time.time() if now is None else now
    account = hashlib.sha256(request.POST.get("username", "").casefold().encode()).hexdigest()
    waits = [
        _counted("signin-address", client_address(request), settings.LOGIN_THROTTLE_ADDRESS, now),
        _counted("signin-account", account[:32], settings.LOGIN_THROTTLE_ACCOUNT, now),
    ]
    return max((w for w in waits if w is not None), default=None)


@functools.cache
def sign_in_path() -> str:
    return reverse("login")


class PageRateLimitMiddleware:
    """Pages and exports past PAGE_THROTTLE_ANON (per address) or PAGE_THROTTLE_USER (per user) a
    period answer 429. The API (its own throttles) and static files (served before) are not counted;
    nor is the sign-in page, whose sign-ins have rates of their own (sign_in_wait), nor the scripts'
    words (/jsi18n/, a part of every page as its stylesheet is)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        wait = None
        if request.path == sign_in_path():
            wait = sign_in_wait(request)
        elif not request.path.startswith("/api/") and request.path != reverse("javascript-catalog"):
            signed_in = request.user.is_authenticated
            rate = settings.PAGE_THROTTLE_USER if signed_in else settings.PAGE_THROTTLE_ANON
            wait = retry_after(request, "page", rate)
        if wait is not None:
            response = HttpResponse(
                gettext("Too many requests: ask again in %(wait)s s.") % {"wait": wait},
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(wait)
            return response
        return self.get_response(request)


class _AtomicRate:
    """DRF's rate throttles counted as the pages are (count above: one atomic increment per request in a fixed
    window). DRF's own read the request history, appended to it and wrote it back: a burst spread over
    processes read the same history and passed more requests than the rate."""

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        now = time.time()
        window = int(now // self.duration)
        self.wait_s = (window + 1) * self.duration - now
        return count(f"rl:api:{self.key}:{window}", self.duration) <= self.num_requests

    def wait(self):
        return max(1.0, self.wait_s)


class AnonThrottle(_AtomicRate, AnonRateThrottle):
    """API_THROTTLE_ANON, per address."""


class UserThrottle(_AtomicRate, UserRateThrottle):
    """API_THROTTLE_USER, per signed-in user."""
