from django.contrib import admin

from audit.log import record

from .cache import invalidate_round
from .catalogue import calendar
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
    list_display = [
        "key",
        "name",
        "ruleset",
        "publication_date",
        "deadline_at",
        "publish_at",
        "history",
    ]
    list_filter = ["history"]
    search_fields = ["key", "name"]
    inlines = [BenchmarkInline, CloudPriceInline]
    actions = ["refresh_cached_pages"]
    filter_horizontal = ["reviewers"]
    readonly_fields = ["published_at"]

    def get_readonly_fields(self, request, obj=None):
        # A round's key names its file and its URLs; the admin's slug check also refused "training-v5.1".
        return [*self.readonly_fields, "key"] if obj is not None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        # A calendar date staff set here wins over the round file from now on (load_rounds keeps it).
        changed = [name for name in calendar.FIELDS if name in form.changed_data]
        if changed:
            obj.calendar_edited = sorted(set(obj.calendar_edited) | set(changed))
        super().save_model(request, obj, form, change)
        if changed:
            record(
                "round.calendar_changed",
                actor=request.user,
                round=obj,
                changes={
                    name: [form.initial.get(name), form.cleaned_data[name]] for name in changed
                },
            )

    def save_related(self, request, form, formsets, change):
        before = (
            set(form.instance.reviewers.values_list("username", flat=True)) if change else set()
        )
        super().save_related(request, form, formsets, change)
        after = set(form.instance.reviewers.values_list("username", flat=True))
        if before != after:
            record(
                "round.reviewers_changed",
                actor=request.user,
                round=form.instance,
                added=sorted(after - before),
                removed=sorted(before - after),
            )

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
