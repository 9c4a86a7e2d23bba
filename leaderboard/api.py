"""The read API (Django REST framework): published rounds, systems, results, runs and prices.

Viewsets are configuration: a queryset of public rows with what it needs joined in (so a
page of any size costs a fixed number of queries), a serializer, a FilterSet, pagination.
Routed under /api/v1/ by portal.api; the OpenAPI schema is at /api/schema/ (drf-spectacular).
"""

from django.db.models import Prefetch
from drf_spectacular.utils import extend_schema
from rest_framework import pagination, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from . import public
from .filters import PriceFilter, ResultFilter, SystemFilter
from .models import Benchmark, CloudPrice, Round
from .serializers import (
    PriceSerializer,
    ResultSerializer,
    RoundSerializer,
    RunSerializer,
    SystemSerializer,
)


class Pages(pagination.PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ReadOnly(viewsets.ReadOnlyModelViewSet):
    permission_classes = [permissions.AllowAny]
    pagination_class = Pages


class RoundViewSet(ReadOnly):
    """Rounds with their benchmarks."""

    serializer_class = RoundSerializer
    lookup_field = "key"
    lookup_value_regex = "[^/]+"  # round keys have dots: training-v5.1
    queryset = Round.objects.prefetch_related(
        Prefetch("benchmarks", queryset=Benchmark.objects.order_by("position"))
    )


class SystemViewSet(ReadOnly):
    """Published systems (those with at least one public result)."""

    serializer_class = SystemSerializer
    filterset_class = SystemFilter
    queryset = (
        public.systems()
        .select_related("round", "submitter")
        .order_by("round__key", "submitter__name", "key", "id")
    )


class ResultViewSet(ReadOnly):
    """Published results: one system on one benchmark, with its score."""

    serializer_class = ResultSerializer
    filterset_class = ResultFilter
    queryset = (
        public.results()
        .select_related("system__round", "system__submitter", "benchmark")
        .order_by(
            "system__round__key",
            "system__submitter__name",
            "system__key",
            "benchmark__position",
            "id",
        )
    )

    @extend_schema(responses=RunSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def runs(self, request, pk=None):
        """The runs of one published result, in index order."""
        result = self.get_object()
        return Response(RunSerializer(result.runs.order_by("index"), many=True).data)


class PriceViewSet(ReadOnly):
    """The rounds' dated price tables (cloud scale = a system's price ÷ the reference price)."""

    serializer_class = PriceSerializer
    filterset_class = PriceFilter
    queryset = CloudPrice.objects.select_related("round")


# Routed under /api/v1/ by portal.api (ROUTE_MODULES).
ROUTES = [
    ("rounds", RoundViewSet, "round"),
    ("systems", SystemViewSet, "system"),
    ("results", ResultViewSet, "result"),
    ("prices", PriceViewSet, "price"),
]
