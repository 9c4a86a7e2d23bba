"""Peer review's records: an Objection one organisation files against another's result or system
during a round's review, and the replies of its thread. The rules are in submissions/review/objections.py."""

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class Objection(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", pgettext_lazy("an objection", "Open")
        ANSWERED = "answered", _("Answered")
        FIX_REQUIRED = "fix_required", _("Waiting for a fix")
        FIXED = "fixed", _("Fix uploaded")
        DECIDED = "decided", _("Decided")

    class Decision(models.TextChoices):
        ACCEPTED = "accepted", _("Accepted: the result stands as submitted")
        FIX_REQUIRED = "fix_required", _("Fix required")
        WAIVED = "waived", _("Waived")
        MOVED_TO_OPEN = "moved_to_open", _("Result moved to the open division")
        WITHDRAWN = "withdrawn", _("Result withdrawn")

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    round = models.ForeignKey(
        "leaderboard.Round", on_delete=models.CASCADE, related_name="objections"
    )
    submission = models.ForeignKey(
        "submissions.Submission",
        on_delete=models.CASCADE,
        related_name="objections",
        help_text="The submission objected to.",
    )
    system = models.ForeignKey(
        "leaderboard.System",
        on_delete=models.CASCADE,
        related_name="objections",
        help_text="The system objected to, or the system of the result objected to.",
    )
    result = models.ForeignKey(
        "leaderboard.Result",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="objections",
        help_text="Blank for an objection against the whole system.",
    )
    from_organisation = models.ForeignKey(
        "accounts.Organisation", on_delete=models.PROTECT, related_name="objections_filed"
    )
    against_organisation = models.ForeignKey(
        "accounts.Organisation", on_delete=models.PROTECT, related_name="objections_received"
    )
    filed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    rule = models.CharField(
        max_length=200, help_text="The rule concerned, e.g. a section of the rules."
    )
    file = models.CharField(max_length=500, blank=True, help_text="The bundle's file concerned.")
    lines = models.CharField(max_length=50, blank=True, help_text="Its lines, e.g. 120-135.")
    comment = models.TextField()
    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.OPEN, db_index=True
    )
    decision = models.CharField(max_length=14, choices=Decision.choices, blank=True)
    decision_note = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    fix = models.ForeignKey(
        "submissions.Submission",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="fixes_for",
        help_text="The upload that answered a fix required.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"Objection {self.uid} by {self.from_organisation} against {self.target_label}"

    def get_absolute_url(self):
        return reverse("review:objection", args=[self.uid])

    @property
    def target_label(self) -> str:
        """'system' or 'system/benchmark', as the thread and lists name it."""
        if self.result_id is not None:
            return f"{self.system.key}/{self.result.benchmark.key}"
        return self.system.key


class ObjectionReply(models.Model):
    """One message of an objection's thread. `side` says in which capacity it was written."""

    class Side(models.TextChoices):
        OBJECTOR = "objector", _("Objecting organisation")
        OBJECTED = "objected", _("Organisation objected to")
        REVIEWER = "reviewer", _("Reviewer")
        PORTAL = "portal", _("Portal")

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    objection = models.ForeignKey(Objection, on_delete=models.CASCADE, related_name="replies")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    side = models.CharField(max_length=10, choices=Side.choices)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self):
        return f"Reply to {self.objection.uid} ({self.side})"
