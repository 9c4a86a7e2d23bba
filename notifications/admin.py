from django.contrib import admin

from .models import Notification, Webhook, WebhookDelivery


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ["key", "recipient", "mail", "mail_attempts", "created_at", "read_at"]
    list_filter = ["kind", "mail"]
    search_fields = ["key", "recipient__username"]


class DeliveryInline(admin.TabularInline):
    model = WebhookDelivery
    extra = 0
    fields = ["key", "state", "attempts", "last_status", "last_answer", "delivered_at"]
    readonly_fields = fields


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["organisation", "url", "active", "created_at"]
    inlines = [DeliveryInline]
