from django.contrib import admin

from .cache import invalidate_round
from .models import Benchmark, CloudPrice, Result, Round, Submitter, System


class BenchmarkInline(admin.TabularInline):
    model = Benchmark
    extra = 0


class CloudPriceInline(admin.TabularInline):
    model = CloudPrice
    extra = 0
    fields = [
        "reference",
        "submitter",
        "system_key",
        "system_name",
        "provider",
        "instance",
        "price_per_hour",
        "currency",
        "as_of",
        "source",
        "status",
    ]


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    list_display = ["key", "name", "ruleset", "publication_date", "history"]
    inlines = [BenchmarkInline, CloudPriceInline]
    actions = ["refresh_cached_pages"]

    @admin.action(description="Refresh the cached tables and exports of the selected rounds")
    def refresh_cached_pages(self, request, queryset):
        for round_ in queryset:
            invalidate_round(round_.key)
        self.message_user(
            request,
            f"Cached pages of {queryset.count()} round(s) will be rebuilt on the next visit.",
        )


@admin.register(CloudPrice)
class CloudPriceAdmin(admin.ModelAdmin):
    """The rounds' dated price tables; cloud scale = a system's price ÷ the line marked reference."""

    list_display = [
        "round",
        "reference",
        "submitter",
        "system_key",
        "system_name",
        "provider",
        "instance",
        "price_per_hour",
        "currency",
        "as_of",
        "status",
    ]
    list_editable = ["price_per_hour", "as_of", "status"]
    list_filter = ["round", "status", "reference", "provider"]
    search_fields = ["submitter", "system_key", "system_name", "instance", "provider", "source"]
    list_select_related = ["round"]


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = [
        "key",
        "submitter",
        "round",
        "division",
        "category",
        "accelerator_count",
        "published",
    ]
    list_filter = ["round", "division", "category", "published"]


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["system", "benchmark", "score_s", "speedup", "energy_j", "published"]
    list_filter = ["system__round", "published"]
    list_select_related = ["system__submitter", "benchmark"]


admin.site.register(Submitter)
