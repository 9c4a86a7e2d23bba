from django.contrib import admin

from .models import Submission


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "round",
        "submitter",
        "original_name",
        "status",
        "runs_checked",
        "runs_total",
        "created_at",
    ]
    list_filter = ["round", "status"]
    readonly_fields = [
        "sha256",
        "size",
        "runs_total",
        "runs_checked",
        "attempts",
        "created_at",
        "finished_at",
    ]
