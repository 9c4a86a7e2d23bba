from django.contrib import admin

from .models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read only: the log is append-only, written by audit.log.record."""

    list_display = [
        "at",
        "actor_name",
        "action",
        "round_key",
        "organisation",
        "object_type",
        "object_uid",
    ]
    list_filter = [
        "action",
        "round_key",
        "organisation",
        "object_type",
        ("at", admin.DateFieldListFilter),
    ]
    search_fields = ["actor_name", "action", "object_uid", "round_key", "organisation", "details"]
    date_hierarchy = "at"
    list_per_page = 100

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]

    # Every staff member reads the log, without a permission granted one by one: the admin site lets in
    # no one else (AdminSite.has_permission), and who is staff is leaderboard.access.policy's to say.
    def has_module_permission(self, request):
        return True

    def has_view_permission(self, request, obj=None):
        return True

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
