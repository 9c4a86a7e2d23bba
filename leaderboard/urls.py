import re

from django.urls import path, register_converter

from . import pages
from .api import feeds


class NameConverter:
    """A submitter's or a system's name as one path segment. Names are text from bundles and may hold a '/',
    which no segment can (a %2F is decoded before routing): the segment holds it as %2F, and '%' as %25, which
    reverse() quotes once more. Names without either are written as `str` writes them."""

    regex = "[^/]+"
    _escaped = re.compile("%(25|2F)", re.IGNORECASE)

    def to_python(self, value: str) -> str:
        return self._escaped.sub(lambda m: "%" if m[1] == "25" else "/", value)

    def to_url(self, value: str) -> str:
        return value.replace("%", "%25").replace("/", "%2F")


register_converter(NameConverter, "name")

app_name = "leaderboard"
urlpatterns = [
    path("", pages.home, name="home"),
    path("rounds/", pages.rounds_page, name="rounds"),
    path("progress/", pages.progress_page, name="progress"),
    path("organisations/<name:name>/", pages.organisation_page, name="organisation"),
    path("id/<str:public_id>", pages.public_id_page, name="public-id"),
    path("feeds/rounds/<str:round_key>/", feeds.RoundFeed(), name="round-feed"),
    path("feeds/benchmarks/<slug:benchmark_key>/", feeds.BenchmarkFeed(), name="benchmark-feed"),
    path("feeds/organisations/<name:name>/", feeds.OrganisationFeed(), name="organisation-feed"),
    path("r/<str:round_key>/", pages.round_page, name="round"),
    path("r/<str:round_key>/compare/", pages.compare_page, name="compare"),
    path("r/<str:round_key>/<name:submitter>/<name:system_key>/", pages.system_page, name="system"),
    path(
        "r/<str:round_key>/<name:submitter>/<name:system_key>/<slug:benchmark_key>/",
        pages.result_page,
        name="result",
    ),
    path(
        "r/<str:round_key>/<name:submitter>/<name:system_key>/<slug:benchmark_key>/log/<int:index>/",
        pages.run_log,
        name="run-log",
    ),
    path(
        "r/<str:round_key>/<name:submitter>/<name:system_key>/<slug:benchmark_key>/log/<int:index>/raw/",
        pages.run_log_raw,
        name="run-log-raw",
    ),
]
