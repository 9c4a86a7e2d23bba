from django.contrib import admin

from .models import Objection, ObjectionReply, Submission


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


class ReplyInline(admin.TabularInline):
    model = ObjectionReply
    extra = 0
    fields = ["created_at", "side", "author", "text"]
    readonly_fields = fields
    can_delete = False


@admin.register(Objection)
class ObjectionAdmin(admin.ModelAdmin):
    """Objections are filed, answered and decided on the review pages (submissions/review/objections.py), where
    each change is audited; here staff find and read them."""

    list_display = [
        "created_at",
        "round",
        "from_organisation",
        "against_organisation",
        "target_label",
        "rule",
        "status",
        "decision",
        "decided_at",
    ]
    list_filter = ["round", "status", "decision", "from_organisation", "against_organisation"]
    search_fields = ["uid", "rule", "file", "comment", "system__key", "submission__uid"]
    date_hierarchy = "created_at"
    list_select_related = [
        "round",
        "from_organisation",
        "against_organisation",
        "system",
        "result__benchmark",
    ]
    inlines = [ReplyInline]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
