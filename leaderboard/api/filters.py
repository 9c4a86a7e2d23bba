"""django-filter FilterSets of the read API: the round table's filters, as query parameters.

The names are the round page's (`division`, `category`, `submitter`, `accelerator`, `processor`,
`framework`, `benchmark`, `acc_min`, `acc_max`, `q`), so a page's query string selects the same
rows here. `submitter` and `organisation` select one organisation under every name it submitted as
(leaderboard.catalogue.organisations): `submitter=NVIDIA` finds the rows submitted as "Nvidia". Text filters
may be repeated to match any of several values, as the page's multiple choices do.
"""

import django_filters as filters
from django.db.models import Q

from ..catalogue import accelerators, frameworks
from ..catalogue.organisations import organisation_of
from ..models import Category, CloudPrice, Division, Result, System
from ..roundtable import textsearch
from ..roundtable.params import FAMILY

MAX_VALUES = 20  # values of one repeated parameter that are read, as on the page
ORGANISATION_HELP = (
    "An organisation, by any name it submitted under (e.g. Nvidia or NVIDIA); case does not matter"
)


# The text filters and the system field each searches.
TEXT_FIELDS = {
    "accelerator": "accelerator_model",
    "processor": "processor_model",
    "framework": "framework",
}
ACCELERATOR_HELP = (
    "Part of the accelerator's name, e.g. H100, or a family as the round page names it, e.g. "
    "family:NVIDIA H100 (leaderboard/catalogue/accelerators.toml); repeat to match any of several"
)
FRAMEWORK_HELP = (
    "Part of the software's name, or a family, e.g. family:PyTorch (leaderboard/catalogue/frameworks.toml); "
    "repeat to match any of several"
)


def _family_members(name: str, family: str) -> list[str]:
    """The exact names of the catalogue that a family covers, read with the page's rule (so names
    that arrive later are covered too): one query over the distinct names."""
    field = TEXT_FIELDS[name]
    texts = System.objects.values_list(field, flat=True).distinct()
    return [t for t in texts if t and _in_family(name, family, t)]


def _in_family(name: str, family: str, text: str) -> bool:
    if name == "accelerator":
        return accelerators.family_of(text) == family
    if name == "framework":
        return family in frameworks.families_of(text)
    return False


COUNT_HELP = "Accelerators in the system, at least (acc_min) or at most (acc_max)"
SEARCH_HELP = (
    "Words that must all appear in submitter, system, hardware or software "
    f"(the first {textsearch.MAX_WORDS} distinct words of its first {textsearch.MAX_LENGTH} characters)"
)


def _facets(prefix: str):
    """The round table's filters on a queryset whose systems are reached through `prefix`."""

    def text(help_text):
        return filters.CharFilter(method="any_of", help_text=help_text)

    def count(lookup):
        return filters.NumberFilter(
            field_name=f"{prefix}accelerator_count", lookup_expr=lookup, help_text=COUNT_HELP
        )

    return {
        "round": filters.CharFilter(
            field_name=f"{prefix}round__key", help_text="Round key, e.g. training-v5.1"
        ),
        "division": filters.ChoiceFilter(field_name=f"{prefix}division", choices=Division.choices),
        "category": filters.MultipleChoiceFilter(
            field_name=f"{prefix}category",
            choices=Category.choices,
            help_text="Availability: cloud, onprem, preview or research; repeat for any of several",
        ),
        "submitter": filters.CharFilter(method="by_organisation", help_text=ORGANISATION_HELP),
        "organisation": filters.CharFilter(method="by_organisation", help_text=ORGANISATION_HELP),
        "accelerator": text(ACCELERATOR_HELP),
        "processor": text("Part of the processor's name; repeat for any of several"),
        "framework": text(FRAMEWORK_HELP),
        "acc_min": count("gte"),
        "acc_max": count("lte"),
        # The names of before v1, kept.
        "accelerators_min": count("gte"),
        "accelerators_max": count("lte"),
        "q": filters.CharFilter(method="search", help_text=SEARCH_HELP),
    }


class Facets(filters.FilterSet):
    prefix = ""

    def any_of(self, queryset, name, value):
        field = self.prefix + TEXT_FIELDS[name]
        values = [v for v in self.data.getlist(name) if v][:MAX_VALUES] or [value]
        match = Q()
        for v in values:
            if v.startswith(FAMILY):
                match |= Q(**{f"{field}__in": _family_members(name, v.removeprefix(FAMILY))})
            else:
                match |= Q(**{f"{field}__icontains": v})
        return queryset.filter(match)

    def by_organisation(self, queryset, name, value):
        values = [v for v in self.data.getlist(name) if v][:MAX_VALUES] or [value]
        match = Q()
        for v in values:
            match |= Q(**{f"{self.prefix}submitter__organisation__iexact": organisation_of(v)})
        return queryset.filter(match)

    def search(self, queryset, name, value):
        return queryset.filter(textsearch.matching(value, self.prefix))


class SystemFilter(type("SystemFacets", (Facets,), _facets(""))):
    ordering = filters.OrderingFilter(
        fields=(
            ("submitter__name", "submitter"),
            ("submitter__organisation", "organisation"),
            ("key", "system"),
            ("accelerator_count", "accelerators"),
            ("nodes", "nodes"),
        )
    )

    class Meta:
        model = System
        fields = []


class ResultFilter(type("ResultFacets", (Facets,), {"prefix": "system__", **_facets("system__")})):
    benchmark = filters.CharFilter(
        field_name="benchmark__key", help_text="Benchmark key, e.g. rgat"
    )
    system = filters.CharFilter(field_name="system__key", help_text="System key (folder name)")
    has_findings = filters.BooleanFilter(
        method="findings", help_text="Only results with (advisory) findings, or only without"
    )
    ordering = filters.OrderingFilter(
        fields=(
            ("score_s", "score"),
            ("speedup", "speedup"),
            ("system__submitter__name", "submitter"),
            ("system__submitter__organisation", "organisation"),
            ("system__key", "system"),
            ("system__accelerator_count", "accelerators"),
            ("benchmark__position", "benchmark"),
            ("public_id", "public_id"),
        )
    )

    class Meta:
        model = Result
        fields = []

    def findings(self, queryset, name, value):
        with_findings = Q(error_count__gt=0) | Q(warning_count__gt=0)
        return queryset.filter(with_findings) if value else queryset.exclude(with_findings)


class PriceFilter(filters.FilterSet):
    round = filters.CharFilter(field_name="round__key")

    class Meta:
        model = CloudPrice
        fields = ["round", "status", "reference"]
