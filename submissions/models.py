"""A Submission: one uploaded bundle and its life through the pipeline."""

from django.conf import settings
from django.db import models
from django.urls import reverse

from leaderboard.models import Round, Submitter


class Submission(models.Model):
    class Status(models.TextChoices):
        RECEIVED = "received", "Received"
        INGESTING = "ingesting", "Unpacking"
        CHECKING = "checking", "Checking runs"
        FINALIZING = "finalizing", "Scoring"
        VALID = "valid", "Valid"
        INVALID = "invalid", "Invalid"
        FAILED = "failed", "Failed"
        PUBLISHED = "published", "Published"
        WITHDRAWN = "withdrawn", "Withdrawn"

    FINAL = {Status.VALID, Status.INVALID, Status.FAILED, Status.PUBLISHED, Status.WITHDRAWN}

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="submissions")
    submitter = models.ForeignKey(
        Submitter, on_delete=models.PROTECT, null=True, blank=True, related_name="submissions"
    )
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    bundle = models.FileField(upload_to="bundles/", max_length=500)
    original_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField()
    publish_when_valid = models.BooleanField(
        default=False, help_text="Publish as soon as it is valid (imports of past rounds)."
    )

    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RECEIVED, db_index=True)
    message = models.TextField(blank=True, help_text="Why it failed, or a summary of the outcome.")
    rule = models.CharField(max_length=50, blank=True, help_text="Rule id of a rejection.")
    notes = models.JSONField(default=list, blank=True, help_text="Things ignored on the way, e.g. stray files.")
    runs_total = models.PositiveIntegerField(default=0)
    runs_checked = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["round", "sha256"], name="unique_bundle_per_round")]

    def __str__(self):
        return f"#{self.pk} {self.original_name}"

    def get_absolute_url(self):
        return reverse("submissions:detail", args=[self.pk])

    @property
    def is_final(self):
        return self.status in self.FINAL

    @property
    def progress_percent(self):
        if self.is_final:
            return 100
        if not self.runs_total:
            return 0
        return int(100 * self.runs_checked / self.runs_total)
