"""The audit log: every change of state, who made it and when, kept append-only.

Events are written only through audit.log.record. An event once saved is never changed:
saving it again, update() and delete() raise AppendOnly (so does deleting through a queryset).
"""

import uuid

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone


class AppendOnly(Exception):
    """An attempt to change or delete an audit event."""


class AuditEventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnly("audit events are append-only: they cannot be updated")

    def delete(self):
        raise AppendOnly("audit events are append-only: they cannot be deleted")

    _raw_delete = delete


class AuditEvent(models.Model):
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,  # a user is deactivated, not deleted, once it has acted
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
    )
    actor_name = models.CharField(
        max_length=150, blank=True, help_text="The actor's username at the time; blank: the system."
    )
    action = models.CharField(max_length=60, db_index=True, help_text="e.g. submission.uploaded")
    object_type = models.CharField(max_length=60, blank=True, db_index=True)
    object_uid = models.CharField(max_length=64, blank=True, db_index=True)
    round_key = models.CharField(max_length=50, blank=True, db_index=True)
    organisation = models.CharField(max_length=200, blank=True, db_index=True)
    details = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["round_key", "-at"])]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_name or 'system'} {self.action}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise AppendOnly("audit events are append-only: an event is never saved twice")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("audit events are append-only: they cannot be deleted")
