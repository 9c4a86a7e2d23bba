"""The REST API v1: one router under /api/v1/, built from the ROUTES of the modules in ROUTE_MODULES.

Each module lists `ROUTES = [(prefix, ViewSet, basename), ...]`; adding a module's name here is all
it takes to publish its endpoints (so `leaderboard` never imports `submissions` to be routed).
The OpenAPI schema is at /api/schema/ and its readable rendering at /api/docs/. The read API of
before v1 (/api/results/ ...) answers with a permanent redirect to the same query under /api/v1/.
"""

from importlib import import_module

from django.http import HttpResponsePermanentRedirect
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView
from rest_framework import routers

ROUTE_MODULES = [
    "leaderboard.api",
    "accounts.api",
    "submissions.review_api",
]


def build_router() -> routers.DefaultRouter:
    router = routers.DefaultRouter()
    for name in ROUTE_MODULES:
        for prefix, viewset, basename in import_module(name).ROUTES:
            router.register(prefix, viewset, basename=basename)
    return router


def to_v1(request, rest):
    """/api/<rest> of before v1 → /api/v1/<rest>, query string kept."""
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"/api/v1/{rest}" + (f"?{query}" if query else ""))


urlpatterns = [
    path("v1/", include((build_router().urls, "v1"))),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    re_path(r"^(?P<rest>((rounds|systems|results|prices)/.*)?)$", to_v1),
]
