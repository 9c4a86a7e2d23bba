"""A Notification: one event told to one user, once (its key and recipient are unique); a Preference:
how a user hears of one kind of event (events.EVENTS says the kinds and their defaults); a Language: the
language a user's notifications are written in."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from .channels import webhooks


class Channel(models.TextChoices):
    BOTH = "both", _("Mail and in the site")
    EMAIL = "email", _("Mail only")
    SITE = "site", _("In the site only")
    NONE = "none", _("Not at all")


class Notification(models.Model):
    class Mail(models.TextChoices):
        NONE = "", "Not mailed"
        PENDING = "pending", "To be mailed"
        SENT = "sent", "Mailed"

    key = models.CharField(
        max_length=200, help_text="The event: its kind and the records it is about."
    )
    kind = models.CharField(max_length=50)
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    title = models.CharField(max_length=300)
    text = models.TextField()
    url = models.CharField(max_length=500, blank=True)
    in_site = models.BooleanField(default=True, help_text="Shown in the user's list.")
    mail = models.CharField(max_length=10, choices=Mail.choices, blank=True, default=Mail.NONE)
    mail_attempts = models.PositiveIntegerField(default=0)
    mail_error = models.CharField(max_length=500, blank=True)
    mailed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            # A retried task or a redelivered message finds the row and tells nobody twice.
            models.UniqueConstraint(fields=["key", "recipient"], name="one_notification_per_event")
        ]
        indexes = [models.Index(fields=["recipient", "read_at"], name="notification_unread")]

    def __str__(self):
        return f"{self.key} to {self.recipient_id}"


class Preference(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preferences"
    )
    kind = models.CharField(max_length=50)
    channel = models.CharField(max_length=10, choices=Channel.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="one_preference_per_kind")
        ]

    def __str__(self):
        return f"{self.user_id} {self.kind}: {self.channel}"


class Language(models.Model):
    """The language a user's notifications are written in, titles, texts and mails: chosen on the
    preferences page or through the API, and otherwise the one they last chose on the site
    (portal/language.py). A user without one is told in settings.LANGUAGE_CODE."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="notification_language",
    )
    language = models.CharField(max_length=10, choices=settings.LANGUAGES)

    def __str__(self):
        return f"{self.user_id}: {self.language}"


class Outbox(models.Model):
    """An event to tell, written in the same transaction as what it tells of (emit.py), so that a broker
    down at commit loses nothing: the clock's sweep queues what is not delivered yet."""

    key = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=50)
    ids = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["delivered_at", "created_at"], name="outbox_pending")]

    def __str__(self):
        return self.key


class Webhook(models.Model):
    """An organisation's CI endpoint: every event about its submissions and objections it is party to is
    POSTed there as JSON, signed with HMAC-SHA256 of the body under `secret` (channels/webhooks.py)."""

    organisation = models.ForeignKey(
        "accounts.Organisation", on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=200)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.organisation_id} {self.url}"

    def clean(self):
        """The admin's form refuses an internal address as the API does (webhooks.address)."""
        try:
            webhooks.address(self.url)
        except webhooks.Refused as refused:
            raise ValidationError({"url": str(refused)}) from None


class WebhookDelivery(models.Model):
    """One event to one webhook, once (unique), with its attempts and the last answer: the delivery log."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Given up"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    key = models.CharField(max_length=200)
    kind = models.CharField(max_length=50)
    payload = models.JSONField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status = models.PositiveIntegerField(null=True, blank=True, help_text="HTTP status")
    last_answer = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "key"], name="one_delivery_per_event")
        ]

    def __str__(self):
        return f"{self.key} to {self.webhook_id}: {self.state}"
