"""The read API (Django REST framework): published rounds, systems, results, runs and prices.

Viewsets are configuration: a queryset of public rows with what it needs joined in (so a
page of any size costs a fixed number of queries), a serializer, a FilterSet, pagination.
Published lists and items carry ETag and Last-Modified and are cached per round cache token
(leaderboard.api.apicache). Routed under /api/v1/ by portal.api.router; the OpenAPI schema is at
/api/schema/ (drf-spectacular).
"""

import uuid

from django.db.models import Count, Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import pagination, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from .. import panels
from ..access import policy, public
from ..models import Benchmark, CloudPrice, Result, Round, Run, System
from .apicache import PublishedCache
from .filters import PriceFilter, ResultFilter, SystemFilter
from .serializers import (
    PriceSerializer,
    ResultDetailSerializer,
    ResultSerializer,
    RoundSerializer,
    RunSerializer,
    SystemSerializer,
)

UID = "[0-9a-fA-F-]{32,36}"


class Pages(pagination.PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ReadOnly(viewsets.ReadOnlyModelViewSet):
    pagination_class = Pages


class RoundViewSet(ReadOnly):
    """Rounds with their benchmarks. Each round is one call for submissions, reviewed and then
    published on its date; its key (e.g. `training-v5.1`) filters the other lists."""

    serializer_class = RoundSerializer
    lookup_field = "key"
    lookup_value_regex = "[^/]+"  # round keys have dots: training-v5.1
    queryset = Round.objects.prefetch_related(
        Prefetch("benchmarks", queryset=Benchmark.objects.order_by("position"))
    )


class SystemViewSet(PublishedCache, ReadOnly):
    """Systems: one hardware and software configuration of one submitter in one round. Those with
    a published result; signed in, also those of the submissions you may see (leaderboard.access.policy)."""

    serializer_class = SystemSerializer
    filterset_class = SystemFilter
    lookup_field = "uid"
    lookup_value_regex = UID
    queryset = System.objects.select_related("round", "submitter").order_by(
        "round__key", "submitter__name", "key", "id"
    )

    def get_queryset(self):
        visible = policy.results_for(policy.viewer(self.request.user))
        return super().get_queryset().filter(pk__in=visible.values("system_id"))

    _shared = None  # the addresses of the page's systems that other published systems share

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        self._shared = shared_system_addresses(page or [])
        return page

    def get_object(self):
        system = super().get_object()
        self._shared = shared_system_addresses([system])
        return system

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "shared": self._shared or set()}


RESULT_ID = OpenApiParameter(
    "public_id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The result's public id (e.g. 5.1-0042), or its uid.",
)


@extend_schema_view(retrieve=extend_schema(parameters=[RESULT_ID]))
class ResultViewSet(PublishedCache, ReadOnly):
    """Results: one system on one benchmark, with its score (the olympic mean of its
        counted runs, in seconds and minutes), its speedup over the round's reference where the round
        has one, and a one-line summary of its findings. One result, by public id, holds its runs.
    Published results; signed in, also those of the submissions you may see (your organisation's,
    and during peer review the round's), which have no public id yet: find them by uid."""

    filterset_class = ResultFilter
    lookup_field = "public_id"
    lookup_value_regex = "[^/]+"  # public ids have dots: 5.1-0042
    queryset = Result.objects.select_related(
        "system__round", "system__submitter", "benchmark"
    ).order_by(
        "system__round__key",
        "system__submitter__name",
        "system__key",
        "benchmark__position",
        "id",
    )

    def get_serializer_class(self):
        return ResultDetailSerializer if self.action == "retrieve" else ResultSerializer

    # The findings of the results on the page (or of the one result), from one call to
    # leaderboard.panels, which the submissions app answers with one query.
    _findings = None

    _shared = None  # the addresses of the page's results that published results share

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        self._findings = panels.findings([r.id for r in page or []])
        self._shared = shared_addresses(page or [])
        return page

    def get_serializer_context(self):
        return {
            **super().get_serializer_context(),
            "findings": self._findings,
            "shared": self._shared or set(),
        }

    def get_queryset(self):
        who = policy.viewer(self.request.user)
        queryset = super().get_queryset().filter(who.result_filter())
        if self.action == "retrieve":
            queryset = queryset.prefetch_related(
                Prefetch("runs", queryset=Run.objects.order_by("index"))
            )
        return queryset

    def get_object(self):
        """By public id, or by uid for a result that has none (yet)."""
        value = self.kwargs[self.lookup_field]
        try:
            lookup = {"uid": uuid.UUID(value)}
        except ValueError:
            lookup = {"public_id": value}
        result = get_object_or_404(self.filter_queryset(self.get_queryset()), **lookup)
        self.check_object_permissions(self.request, result)
        if self.action == "retrieve":
            self._findings = panels.findings([result.id])
        self._shared = shared_addresses([result])
        return result

    @extend_schema(parameters=[RESULT_ID], responses=RunSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, filterset_class=None)
    def runs(self, request, public_id=None):
        """The runs of one published result, in index order."""
        result = self.get_object()
        return Response(RunSerializer(result.runs.order_by("index"), many=True).data)


class PriceViewSet(PublishedCache, ReadOnly):
    """The rounds' dated price tables (cloud scale = a system's price ÷ the reference price)."""

    serializer_class = PriceSerializer
    filterset_class = PriceFilter
    lookup_field = "uid"
    lookup_value_regex = UID
    queryset = CloudPrice.objects.select_related("round")


# Routed under /api/v1/ by portal.api.router (ROUTE_MODULES).
ROUTES = [
    ("rounds", RoundViewSet, "round"),
    ("systems", SystemViewSet, "system"),
    ("results", ResultViewSet, "result"),
    ("prices", PriceViewSet, "price"),
]


def shared_system_addresses(systems) -> set[tuple]:
    """The addresses (round, submitter, system key) of these systems that more than one system with a
    published result has: folders published side by side (v4.0: smc, smc-ac-power and smc-dc-power, one
    submitter, the same system folders), told apart by ?system=<uid>. One query."""
    if not systems:
        return set()
    fields = ("round_id", "submitter_id", "key")
    return set(
        System.objects.filter(
            key__in={s.key for s in systems}, pk__in=public.results().values("system_id")
        )
        .values(*fields)
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .values_list(*fields)
    )


def shared_addresses(results) -> set[tuple]:
    """The addresses (round, submitter, system key, benchmark) of these results that more than one
    published result has (folders published side by side: leaderboard.roundtable.rows.address_apart). One query."""
    if not results:
        return set()
    fields = ("system__round_id", "system__submitter_id", "system__key", "benchmark_id")
    return set(
        public.results()
        .filter(system__key__in={r.system.key for r in results})
        .values(*fields)
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .values_list(*fields)
    )
