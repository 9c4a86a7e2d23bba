"""Conditional and cached answers of the API for published data, keyed by the rounds' cache tokens.

Published data changes only through `leaderboard.cache.invalidate_round`, which replaces the round's
`cache_token` and sets its `changed_at`. So for a viewer who sees published data only (today: anyone
not signed in), one small query over the rounds gives:
- an ETag (the tokens, the request's URL and its format) and a Last-Modified (the latest
  `changed_at`), with 304 Not Modified on a matching If-None-Match or If-Modified-Since;
- the key under which the rendered body is kept gzipped (leaderboard.cache), so a repeated page
  costs that query and a cache read, whatever its size.
Signed-in viewers, who may see unpublished rows of their organisation, and the browsable API are
answered fresh each time.
"""

import gzip
import hashlib

from django.http import HttpResponse
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import http_date

from . import cache
from .models import Round

# Headers of a rendered answer that are kept with its body.
KEPT_HEADERS = ("Link",)


def published_state() -> tuple[str, float | None]:
    """(a digest of every round's cache token, the latest change as a timestamp): one query."""
    rows = list(Round.objects.order_by("key").values_list("key", "cache_token", "changed_at"))
    digest = hashlib.sha1(repr([(k, t) for k, t, _ in rows]).encode()).hexdigest()
    latest = max((c for _, _, c in rows if c), default=None)
    return digest, latest.timestamp() if latest else None


def sees_published_only(request) -> bool:
    return not request.user.is_authenticated


class PublishedCache:
    """A viewset mixin: list and retrieve answered with ETag and Last-Modified, 304, and a cached body."""

    def list(self, request, *args, **kwargs):
        return self._answer(request, super().list, args, kwargs)

    def retrieve(self, request, *args, **kwargs):
        return self._answer(request, super().retrieve, args, kwargs)

    def _answer(self, request, build, args, kwargs):
        fmt = request.accepted_renderer.format
        if fmt == "api" or not sees_published_only(request):
            return build(request, *args, **kwargs)
        digest, last_modified = published_state()
        # The body holds absolute links, so the scheme and host are part of what it depends on.
        key = hashlib.sha1(
            "\x1f".join([digest, request.build_absolute_uri(), fmt]).encode()
        ).hexdigest()
        etag = f'"{key[:32]}"'
        not_modified = get_conditional_response(
            request, etag=etag, last_modified=last_modified and int(last_modified)
        )
        if not_modified is None:
            cache_key = f"lb:api:{key}"
            stored = cache.cache().get(cache_key)
            if stored is None:
                response = build(request, *args, **kwargs)
                if response.status_code != 200:
                    return response
                self._render(request, response)
                stored = (
                    response["Content-Type"],
                    gzip.compress(response.content, compresslevel=6, mtime=0),
                    {h: response[h] for h in KEPT_HEADERS if h in response},
                )
                cache.cache().set(cache_key, stored, cache.TIMEOUT)
            answer = _gzipped(request, *stored)
        else:
            answer = not_modified
        answer["ETag"] = etag
        if last_modified:
            answer["Last-Modified"] = http_date(last_modified)
        patch_vary_headers(answer, ("Accept", "Accept-Encoding", "Cookie", "Authorization"))
        return answer

    def _render(self, request, response):
        """Render now, as finalize_response and Django would later, to keep the bytes."""
        response.accepted_renderer = request.accepted_renderer
        response.accepted_media_type = request.accepted_media_type
        response.renderer_context = self.get_renderer_context()
        response.render()


def _gzipped(request, content_type: str, packed: bytes, headers: dict) -> HttpResponse:
    if "gzip" in request.META.get("HTTP_ACCEPT_ENCODING", ""):
        response = HttpResponse(packed, content_type=content_type)
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(packed), content_type=content_type)
    for name, value in headers.items():
        response[name] = value
    return response
