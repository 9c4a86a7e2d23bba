"""The REST API v1: one router under /api/v1/, built from the ROUTES of the modules in ROUTE_MODULES.

Each module lists `ROUTES = [(prefix, ViewSet, basename), ...]`; adding a module's name here is all
it takes to publish its endpoints (so `leaderboard` never imports `submissions` to be routed).
The OpenAPI schema is at /api/schema/ and its readable rendering (Redoc) at /api/docs/. The read
API of before v1 (/api/results/ ...) answers with a permanent redirect to the same query under
/api/v1/.
"""

import re
import secrets
from importlib import import_module

from django.conf import settings
from django.http import Http404, HttpResponsePermanentRedirect, JsonResponse
from django.urls import include, path, re_path, reverse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView
from rest_framework import routers
from rest_framework.response import Response

from .redoc import redoc_bundle

ROUTE_MODULES = [
    "leaderboard.api.viewsets",
    "accounts.api",
    "submissions.review.api",
    "submissions.refchecks.api",
    "submissions.api",
    "notifications.api",
]


class Root(routers.APIRootView):
    """The portal's REST API, version 1: what it holds, where its documentation is, its endpoints."""

    def get(self, request, *args, **kwargs):
        endpoints = super().get(request, *args, **kwargs).data
        return Response(
            {
                "about": settings.SPECTACULAR_SETTINGS["DESCRIPTION"],
                "docs": request.build_absolute_uri(reverse("api-docs")),
                "schema": request.build_absolute_uri(reverse("schema")),
                "endpoints": endpoints,
            }
        )


class ApiDocs(SpectacularRedocView):
    """The schema drawn by Redoc, from this site only: Redoc's own files come from
    drf-spectacular-sidecar (its bundle without its makers' logo, which it drew from their site:
    portal/api/redoc.py), and the page's policy refuses anything from elsewhere. The site's policy but for Redoc's styles: its
    styled-components write them into <style> elements, which carry the nonce of this answer
    (Redoc's option `nonce`; static/js/api_docs.js starts Redoc with it). The page is not cached, so
    each answer has a nonce of its own. Before Redoc starts, its bundle writes perfect-scrollbar's
    rules into a <style> element of its own (first empty) with no nonce: those two contents are
    allowed by their hashes (REDOC_STYLES, of the sidecar in requirements.txt; after an upgrade,
    tests/browser/test_api_docs_browser.py names the new hash that Chromium refused)."""

    template_name = "portal/api_docs.html"
    schema = None  # a page about the API, not an operation of it
    REDOC_STYLES = (
        "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",  # empty
        "'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='",  # perfect-scrollbar's rules
    )
    POLICY = (
        "default-src 'self'; script-src 'self'; "
        f"style-src 'self' 'nonce-{{nonce}}' {' '.join(REDOC_STYLES)}; "
        "img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; "
        "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    )

    def get(self, request, *args, **kwargs):
        nonce = secrets.token_urlsafe(16)
        response = super().get(request, *args, **kwargs)
        response.data["nonce"] = nonce
        response["Content-Security-Policy"] = self.POLICY.format(nonce=nonce)
        return response


def build_router() -> routers.DefaultRouter:
    router = routers.DefaultRouter()
    router.APIRootView = Root
    for name in ROUTE_MODULES:
        for prefix, viewset, basename in import_module(name).ROUTES:
            router.register(prefix, viewset, basename=basename)
    return router


# Before v1, items were found by primary key: /api/results/<pk>/runs/.
OLD_ITEM = re.compile(r"(results|systems|prices)/(\d+)/(.*)")


def _new_id(kind: str, pk: int) -> str:
    """The id that v1 finds a public item of before v1 by (a result's public id, else its uid)."""
    from leaderboard.access import public
    from leaderboard.models import CloudPrice

    rows = {"results": public.results(), "systems": public.systems(), "prices": CloudPrice.objects}
    fields = ["uid", "public_id"] if kind == "results" else ["uid"]
    row = rows[kind].filter(pk=pk).values_list(*fields).first()
    if row is None:
        raise Http404("No such item.")
    return str(row[-1] or row[0])


@csrf_exempt  # it changes nothing, and a redirect of a POST is refused by the target if need be
def to_v1(request, rest):
    """/api/<rest> of before v1 → /api/v1/<rest>, query string kept."""
    old = OLD_ITEM.fullmatch(rest)
    if old:
        rest = f"{old[1]}/{_new_id(old[1], int(old[2]))}/{old[3]}"
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"/api/v1/{rest}" + (f"?{query}" if query else ""))


@csrf_exempt  # it changes nothing; CSRF's HTML 403 would answer a POST with a cookie instead
def not_found(request, rest=""):
    """Any other path under /api/ answers as the API does, in JSON, not with the site's HTML page."""
    return JsonResponse({"detail": "Not found."}, status=404)


urlpatterns = [
    path("v1/", include((build_router().urls, "v1"))),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", ApiDocs.as_view(url_name="schema"), name="api-docs"),
    path("docs/redoc.standalone.js", redoc_bundle, name="redoc-bundle"),
    re_path(r"^(?P<rest>((rounds|systems|results|prices)/.*)?)$", to_v1),
    re_path(r"^(?P<rest>.*)$", not_found),
]
