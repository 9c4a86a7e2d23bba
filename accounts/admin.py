from django.contrib import admin

from .models import ApiToken, Membership, Organisation


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Organisation)
class OrganisationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "uid", "created_at"]
    search_fields = ["name", "slug"]
    readonly_fields = ["uid"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organisation", "role", "created_at"]
    list_filter = ["role", "organisation"]
    search_fields = ["user__username", "user__email", "organisation__name"]
    autocomplete_fields = ["user", "organisation"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Staff see and revoke tokens; keys are made by their users (the key is never stored)."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "prefix"]
    readonly_fields = ["uid", "user", "name", "prefix", "created_at", "last_used_at"]

    def has_add_permission(self, request):
        return False
