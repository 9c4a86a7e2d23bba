"""Conditional and cached answers of the API for published data, keyed by the rounds' cache tokens.

Published data changes only through `leaderboard.cache.invalidate_round`, which replaces the round's
`cache_token` and sets its `changed_at`. So for a request that carries no credentials (no token, no
session: it can see published data only) and whose parameters take values from bounded sets (`bounded`:
no search, no free text), the rounds (read as the round page reads them, see State)
give:
- an ETag (the tokens, the request's URL and Accept header) and a Last-Modified (the latest
  `changed_at`), with 304 Not Modified on a matching If-None-Match or If-Modified-Since;
- the key under which the rendered body is kept gzipped (leaderboard.cache).
A repeated page is answered from there by the view's handler (list, retrieve), after DRF's `initial`
has checked the throttles: an answer from the cache, or a 304, is counted and refused past the rate as a
built one (uncounted, a client asking the same thing again and again was never limited). Requests with
credentials, who may see their organisation's unpublished rows, and the browsable API are answered fresh
each time, the former marked `Cache-Control: private` (finalize_response). Only DRF's documented hooks
are overridden (its "Dispatch methods": initialize_request, finalize_response; the handlers).
"""

import gzip
import hashlib
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpResponse, QueryDict
from django.utils import timezone, translation
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date

from .. import cache
from ..models import Round

# Headers of a rendered answer that are kept with its body.
KEPT_HEADERS = ("Link",)
VARY = ("Accept", "Accept-Encoding", "Accept-Language", "Cookie", "Authorization")


class State:
    """What a credential-free GET of published data depends on: the rounds' cache tokens, and
    whether each round's publication minute has come (its results show from then on)."""

    def __init__(self, request):
        named = [k for k in request.GET.getlist("round")[:20] if "\x00" not in k]
        if named:
            # A list of one round's rows depends on that round only, read as the round page reads it.
            found = [cache.current_round(k) for k in named]
            rows = [(r.key, r.cache_token, r.changed_at, r.publish_at) for r in found if r]
        else:
            rows = list(
                Round.objects.order_by("key").values_list(
                    "key", "cache_token", "changed_at", "publish_at"
                )
            )
        now = timezone.now()
        latest = max((c for _, _, c, _ in rows if c), default=None)
        self.last_modified = int(latest.timestamp()) if latest else None
        # The body holds absolute links, so the scheme and host are part of what it depends on.
        parts = [repr([(k, t, p is None or p <= now) for k, t, _, p in rows])]
        # ... and the language it is answered in (portal/language.py): its error texts and labels.
        parts += [
            request.build_absolute_uri(),
            request.META.get("HTTP_ACCEPT", ""),
            translation.get_language(),
        ]
        self.key = hashlib.sha1("\x1f".join(parts).encode()).hexdigest()
        self.etag = f'"{self.key[:32]}"'

    def headers(self, response):
        response["ETag"] = self.etag
        if self.last_modified:
            response["Last-Modified"] = http_date(self.last_modified)
        patch_vary_headers(response, VARY)
        return response


def bounded(request) -> bool:
    """Whether the answer to `request` is one of a bounded set, and so kept: its parameters pick a
    round that exists, a division, categories, a format, a page. Free text (`q`, `accelerator`,
    `processor`, `framework`, `submitter`, `organisation`), counts (`acc_min`, `acc_max`) and rounds that
    do not exist would each make a copy of their own (issue 34: 400 searches by one client kept 403
    copies, 2.3 MB), so those are answered fresh each time."""
    if not set(request.GET) <= BOUNDED_PARAMS:
        return False
    return all(cache.current_round(k) is not None for k in request.GET.getlist("round")[:20])


def without_credentials(request) -> bool:
    """Sent with no token and no session: the sender sees published data only."""
    return (
        "HTTP_AUTHORIZATION" not in request.META
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
    )


# Query parameters every list reads besides its filters: DRF's format, the pages (leaderboard/api/viewsets.py).
COMMON_PARAMS = ("format", "page", "page_size")
# The parameters whose values come from a bounded set (the rounds, choices, the pages of a list).
BOUNDED_PARAMS = {"round", "division", "category", *COMMON_PARAMS}


def drop_unknown_parameters(request, known) -> None:
    """Make `request` the one without the query parameters not in `known`, before anything reads it:
    the answer (its links too) and its cache key are then those of the query the API understands, so
    `?utm=1`, `?_=1700000000` or `?x=<random>` makes no new copy in the cache."""
    items = [(k, v) for k, values in request.GET.lists() if k in known for v in values]
    if len(items) != sum(len(values) for _, values in request.GET.lists()):
        query = urlencode(items)
        request.META["QUERY_STRING"] = query
        request.GET = QueryDict(query)


class PublishedCache:
    """A viewset mixin: list and retrieve answered with ETag and Last-Modified, 304, and a cached body."""

    _state = None

    def initialize_request(self, request, *args, **kwargs):
        """The query without the parameters the view does not read, before anything reads it."""
        if request.method == "GET" and without_credentials(request):
            filterset = getattr(self, "filterset_class", None)
            filters = filterset.base_filters if filterset is not None else {}
            drop_unknown_parameters(request, {*filters, *COMMON_PARAMS})
        return super().initialize_request(request, *args, **kwargs)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if not without_credentials(request):
            # Built for one user, who may see unpublished rows: no shared cache keeps it for another.
            patch_cache_control(response, private=True)
        return response

    def _kept_answer(self, request):
        """304, or the kept answer; None when the view must build the answer (then kept by _answer).
        Called by the handlers, so DRF's initial() has counted the request against the throttles."""
        if not (request.method == "GET" and without_credentials(request) and bounded(request)):
            return None
        self._state = state = State(request)
        not_modified = get_conditional_response(
            request, etag=state.etag, last_modified=state.last_modified
        )
        if not_modified is not None:
            return state.headers(not_modified)
        stored = cache.get(f"lb:api:{state.key}")
        if stored is not None:
            return state.headers(_gzipped(request, *stored))
        return None

    def list(self, request, *args, **kwargs):
        kept = self._kept_answer(request)
        if kept is not None:
            return kept
        return self._answer(request, super().list(request, *args, **kwargs))

    def retrieve(self, request, *args, **kwargs):
        kept = self._kept_answer(request)
        if kept is not None:
            return kept
        return self._answer(request, super().retrieve(request, *args, **kwargs))

    def _answer(self, request, response):
        """Keep a built answer for the next request like this one, and answer it the same way."""
        state = self._state
        if (
            state is None
            or response.status_code != 200
            or request.accepted_renderer.format == "api"
        ):
            return response
        # Render now, as finalize_response and Django would later, to keep the bytes.
        response.accepted_renderer = request.accepted_renderer
        response.accepted_media_type = request.accepted_media_type
        response.renderer_context = self.get_renderer_context()
        response.render()
        stored = (
            response["Content-Type"],
            gzip.compress(response.content, compresslevel=6, mtime=0),
            {h: response[h] for h in KEPT_HEADERS if h in response},
        )
        cache.put(f"lb:api:{state.key}", stored)
        return state.headers(_gzipped(request, *stored))


def _gzipped(request, content_type: str, packed: bytes, headers: dict) -> HttpResponse:
    if "gzip" in request.META.get("HTTP_ACCEPT_ENCODING", ""):
        response = HttpResponse(packed, content_type=content_type)
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(packed), content_type=content_type)
    for name, value in headers.items():
        response[name] = value
    return response
