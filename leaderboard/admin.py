from django.contrib import admin

from .models import Benchmark, Result, Round, Submitter, System


class BenchmarkInline(admin.TabularInline):
    model = Benchmark
    extra = 0


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    list_display = ["key", "name", "ruleset", "publication_date", "history"]
    inlines = [BenchmarkInline]


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["key", "submitter", "round", "division", "category", "accelerator_count", "published"]
    list_filter = ["round", "division", "category", "published"]


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["system", "benchmark", "score_s", "speedup", "published"]
    list_filter = ["system__round", "published"]
    list_select_related = ["system__submitter", "benchmark"]


admin.site.register(Submitter)
