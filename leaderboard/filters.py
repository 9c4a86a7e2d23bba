"""django-filter FilterSets of the read API: the round table's filters, as query parameters.

`submitter` and `organisation` select one organisation under every name it submitted as
(leaderboard.organisations): `submitter=NVIDIA` finds the rows submitted as "Nvidia".
"""

import django_filters as filters
from django.db.models import Q

from .models import Category, CloudPrice, Division, Result, System
from .organisations import organisation_of

ORGANISATION_HELP = (
    "An organisation, by any name it submitted under (e.g. Nvidia or NVIDIA); case does not matter"
)


def _organisation(queryset, prefix: str, value: str):
    return queryset.filter(**{f"{prefix}submitter__organisation__iexact": organisation_of(value)})


def _search(queryset, prefix: str, value: str):
    for word in value.split():
        queryset = queryset.filter(
            Q(**{f"{prefix}submitter__name__icontains": word})
            | Q(**{f"{prefix}submitter__organisation__icontains": word})
            | Q(**{f"{prefix}name__icontains": word})
            | Q(**{f"{prefix}key__icontains": word})
            | Q(**{f"{prefix}accelerator_model__icontains": word})
            | Q(**{f"{prefix}processor_model__icontains": word})
            | Q(**{f"{prefix}framework__icontains": word})
        )
    return queryset


class SystemFilter(filters.FilterSet):
    round = filters.CharFilter(field_name="round__key", help_text="Round key, e.g. training-v5.1")
    division = filters.ChoiceFilter(choices=Division.choices)
    category = filters.ChoiceFilter(choices=Category.choices)
    submitter = filters.CharFilter(method="by_organisation", help_text=ORGANISATION_HELP)
    organisation = filters.CharFilter(method="by_organisation", help_text=ORGANISATION_HELP)
    accelerator = filters.CharFilter(field_name="accelerator_model", lookup_expr="icontains")
    processor = filters.CharFilter(field_name="processor_model", lookup_expr="icontains")
    framework = filters.CharFilter(field_name="framework", lookup_expr="icontains")
    accelerators_min = filters.NumberFilter(field_name="accelerator_count", lookup_expr="gte")
    accelerators_max = filters.NumberFilter(field_name="accelerator_count", lookup_expr="lte")
    q = filters.CharFilter(
        method="search",
        help_text="Words that must all appear in submitter, system, hardware or software",
    )

    class Meta:
        model = System
        fields = [
            "round",
            "division",
            "category",
            "submitter",
            "organisation",
            "accelerator",
            "processor",
            "framework",
        ]

    def search(self, queryset, name, value):
        return _search(queryset, "", value)

    def by_organisation(self, queryset, name, value):
        return _organisation(queryset, "", value)


class ResultFilter(filters.FilterSet):
    round = filters.CharFilter(
        field_name="system__round__key", help_text="Round key, e.g. training-v5.1"
    )
    benchmark = filters.CharFilter(field_name="benchmark__key")
    division = filters.ChoiceFilter(field_name="system__division", choices=Division.choices)
    category = filters.ChoiceFilter(field_name="system__category", choices=Category.choices)
    submitter = filters.CharFilter(method="by_organisation", help_text=ORGANISATION_HELP)
    organisation = filters.CharFilter(method="by_organisation", help_text=ORGANISATION_HELP)
    system = filters.CharFilter(field_name="system__key", help_text="System key (folder name)")
    accelerator = filters.CharFilter(
        field_name="system__accelerator_model", lookup_expr="icontains"
    )
    processor = filters.CharFilter(field_name="system__processor_model", lookup_expr="icontains")
    framework = filters.CharFilter(field_name="system__framework", lookup_expr="icontains")
    accelerators_min = filters.NumberFilter(
        field_name="system__accelerator_count", lookup_expr="gte"
    )
    accelerators_max = filters.NumberFilter(
        field_name="system__accelerator_count", lookup_expr="lte"
    )
    has_findings = filters.BooleanFilter(
        method="findings", help_text="Only results with (advisory) findings, or only without"
    )
    q = filters.CharFilter(
        method="search",
        help_text="Words that must all appear in submitter, system, hardware or software",
    )
    ordering = filters.OrderingFilter(
        fields=(
            ("score_s", "score"),
            ("speedup", "speedup"),
            ("system__submitter__name", "submitter"),
            ("system__submitter__organisation", "organisation"),
            ("system__accelerator_count", "accelerators"),
            ("benchmark__position", "benchmark"),
            ("id", "id"),
        )
    )

    class Meta:
        model = Result
        fields = [
            "round",
            "benchmark",
            "division",
            "category",
            "submitter",
            "organisation",
            "system",
        ]

    def search(self, queryset, name, value):
        return _search(queryset, "system__", value)

    def by_organisation(self, queryset, name, value):
        return _organisation(queryset, "system__", value)

    def findings(self, queryset, name, value):
        with_findings = Q(error_count__gt=0) | Q(warning_count__gt=0)
        return queryset.filter(with_findings) if value else queryset.exclude(with_findings)


class PriceFilter(filters.FilterSet):
    round = filters.CharFilter(field_name="round__key")

    class Meta:
        model = CloudPrice
        fields = ["round", "status", "reference"]
