"""A Submission: one uploaded bundle and its life through the pipeline; an Upload: one arriving in parts."""

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from leaderboard import statuses
from leaderboard.models import Round, Submitter


class Submission(models.Model):
    # Declared where the read side may name them too (leaderboard never imports submissions).
    Status = statuses.SubmissionStatus
    FINAL = statuses.SUBMISSION_FINAL

    # What pages, the API and messages call it: a pk would tell how many submissions there are.
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="submissions")
    submitter = models.ForeignKey(
        Submitter, on_delete=models.PROTECT, null=True, blank=True, related_name="submissions"
    )
    organisation = models.ForeignKey(
        "accounts.Organisation",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="submissions",
        help_text="The organisation it was uploaded for; none for imports from the command line.",
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    bundle = models.FileField(upload_to="bundles/", max_length=500)
    original_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField()
    publish_when_valid = models.BooleanField(
        default=False, help_text="Publish as soon as it is valid (imports of past rounds)."
    )

    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.RECEIVED, db_index=True
    )
    message = models.TextField(blank=True, help_text="Why it failed, or a summary of the outcome.")
    rule = models.CharField(max_length=50, blank=True, help_text="Rule id of a rejection.")
    notes = models.JSONField(
        default=list, blank=True, help_text="Things ignored on the way, e.g. stray files."
    )
    runs_total = models.PositiveIntegerField(default=0)
    runs_checked = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    # Its step's claim (checking/leases.py claim): the task holding it, until when unless its heartbeat renews it.
    claimed_by = models.CharField(max_length=255, blank=True)
    claim_expires = models.DateTimeField(null=True, blank=True)
    lost_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the sweeper last counted an attempt lost (a worker died): the tasks started "
        "before belong to that attempt.",
    )
    queue_pending = models.BooleanField(
        default=False,
        help_text="Its first step could not be handed to the task queue (the broker did not answer); "
        "the sweeper hands it over once the broker is back.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        # The same bytes are one submission per organisation (uploaded by any of its members): another
        # organisation gets a submission of its own, so that nothing tells one what another uploaded. Uploads of
        # before organisations are one per uploader; from the command line (no uploader) the same bytes again are
        # the same submission. NULLs are distinct in a unique index, hence three constraints.
        constraints = [
            models.UniqueConstraint(
                fields=["round", "sha256", "organisation"],
                name="unique_bundle_per_organisation",
                condition=models.Q(organisation__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["round", "sha256", "uploaded_by"],
                name="unique_bundle_per_uploader",
                condition=models.Q(organisation__isnull=True, uploaded_by__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["round", "sha256"],
                name="unique_command_line_bundle_per_round",
                condition=models.Q(organisation__isnull=True, uploaded_by__isnull=True),
            ),
        ]

    def __str__(self):
        return f"{self.uid} {self.original_name}"

    def get_absolute_url(self):
        return reverse("submissions:detail", args=[self.uid])

    @property
    def is_final(self):
        return self.status in self.FINAL


class Validation(models.Model):
    """One pass of the round's rules over a submission; re-validation adds another, keeping the history."""

    Status = statuses.ValidationStatus

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="validations")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    verdict = models.CharField(max_length=12, blank=True, help_text="valid or invalid, once done")
    reason = models.CharField(max_length=300, blank=True, help_text="Why it was run.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    errors = models.PositiveIntegerField(default=0)
    warnings = models.PositiveIntegerField(default=0)
    infos = models.PositiveIntegerField(default=0)
    scored = models.PositiveIntegerField(
        default=0,
        help_text="How many results this pass gave a score: one or more, before the round's uploads "
        "closed, makes its organisation a peer reviewer of the round (leaderboard/access/policy.py).",
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["submission", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "number"], name="unique_validation_number"
            )
        ]

    def __str__(self):
        return f"{self.submission} validation {self.number}"


class RunCheck(models.Model):
    """A run checked in one validation; the unique row is how a check claims its run exactly once."""

    validation = models.ForeignKey(Validation, on_delete=models.CASCADE, related_name="run_checks")
    run = models.ForeignKey("leaderboard.Run", on_delete=models.CASCADE, related_name="checks")
    checked_at = models.DateTimeField(auto_now_add=True)
    worker = models.CharField(
        max_length=100, blank=True, help_text="host:pid of the process that checked it"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["validation", "run"], name="unique_run_check")
        ]


class Finding(models.Model):
    """One rule outcome: severity, stable rule id, where it shows, what to do."""

    class Severity(models.TextChoices):
        ERROR = "error", _("Error")
        WARNING = "warning", _("Warning")
        INFO = "info", _("Info")

    validation = models.ForeignKey(Validation, on_delete=models.CASCADE, related_name="findings")
    result = models.ForeignKey(
        "leaderboard.Result", on_delete=models.CASCADE, null=True, blank=True
    )
    run = models.ForeignKey("leaderboard.Run", on_delete=models.CASCADE, null=True, blank=True)
    system_key = models.CharField(max_length=200, blank=True)
    benchmark = models.CharField(max_length=50, blank=True)
    severity = models.CharField(max_length=7, choices=Severity.choices)
    rule = models.CharField(max_length=60)
    file = models.CharField(max_length=500, blank=True)
    line = models.PositiveIntegerField(null=True, blank=True)
    message = models.TextField()
    hint = models.TextField(blank=True)
    advisory = models.BooleanField(
        default=False, help_text="Shown, but does not block (imported history)."
    )

    class Meta:
        ordering = ["system_key", "benchmark", "file", "line", "pk"]
        indexes = [models.Index(fields=["validation", "severity"])]

    def __str__(self):
        return f"{self.severity} {self.rule} {self.file}:{self.line or ''}"

    @classmethod
    def from_rule(cls, found, *, default_file: str = "", **where) -> "Finding":
        """The row of one rule outcome (submissions.checking.rules.Finding: severity, rule, file, line,
        message, hint), placed by `where` (validation, result, run, system_key, benchmark, advisory);
        `default_file` when the rule named no file."""
        return cls(
            severity=found.severity,
            rule=found.rule,
            file=found.file or default_file,
            line=found.line,
            message=found.message,
            hint=found.hint,
            **where,
        )

    def as_dict(self):
        return {
            "severity": self.severity,
            "rule": self.rule,
            "file": self.file,
            "line": self.line,
            "message": self.message,
            "hint": self.hint,
            "advisory": self.advisory,
            "system": self.system_key,
            "benchmark": self.benchmark,
        }


class TaskLease(models.Model):
    """A task a worker process has started, kept fresh by that process's heartbeat. When the beats stop
    (the process died), the sweeper queues the task again at once instead of waiting for the broker to
    hand its unacknowledged message to another worker."""

    task_id = models.CharField(max_length=255, unique=True)
    task_name = models.CharField(max_length=200)
    args = models.JSONField(default=list)
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="leases")
    options = models.JSONField(
        default=dict, help_text="What the task was queued with (its time limits)."
    )
    worker = models.CharField(max_length=200, help_text="host:pid of the process running it")
    started_at = models.DateTimeField(auto_now_add=True)
    beat_at = models.DateTimeField(db_index=True)

    def __str__(self):
        return f"{self.task_name}{tuple(self.args)} on {self.worker}"


class UnpackRoom(models.Model):
    """Room on MEDIA_ROOT's disk held for a submission while its bundle is opened (checking.pipeline.common
    room_to_open): the ledger every worker process reads, so that two opening bundles at once are admitted
    by the room left for both, not each by the same free space. A row counts while its submission is
    being taken in; one left by a killed worker stops counting when the submission moves on."""

    submission = models.OneToOneField(
        Submission, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    bytes = models.BigIntegerField()
    held_since = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.bytes} bytes for {self.submission_id}"


class Upload(models.Model):
    """A chunked upload (uploads.py): its parts are appended to a local file at the offset the portal has; on
    completion the file becomes a Submission through intake."""

    class Status(models.TextChoices):
        OPEN = "open", "Receiving"
        COMPLETE = "complete", "Complete"

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="uploads")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    organisation = models.ForeignKey(
        "accounts.Organisation", on_delete=models.CASCADE, related_name="uploads"
    )
    name = models.CharField(max_length=255, help_text="The bundle's file name, as shown.")
    size = models.PositiveBigIntegerField(
        help_text="Declared at creation; no byte past it is taken."
    )
    offset = models.PositiveBigIntegerField(default=0, help_text="Bytes received so far.")
    sha256 = models.CharField(
        max_length=64, blank=True, help_text="Declared at creation, if given."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    submission = models.ForeignKey(
        Submission, on_delete=models.SET_NULL, null=True, blank=True, related_name="uploads"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    def __str__(self):
        return f"upload {self.uid} {self.name} ({self.offset} of {self.size} bytes)"


from submissions.refchecks.models import Agent, ReferenceCheck  # noqa: E402, F401 - GPU reference checks
from submissions.review.models import Objection, ObjectionReply  # noqa: E402, F401 - peer review (submissions/review/objections.py)
