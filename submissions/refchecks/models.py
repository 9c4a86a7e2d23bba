"""The reference checks' rows: the agents as their heartbeats describe them, and each check of a result."""

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from leaderboard import statuses


class Agent(models.Model):
    """A GPU worker (agent/) as its last heartbeat described it. Online while it was seen within
    AGENT_OFFLINE_AFTER_S."""

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    hostname = models.CharField(max_length=255, unique=True)
    queues = models.JSONField(default=list, help_text="The queues it consumes: gpu, gpu.<family>.")
    accelerator = models.CharField(max_length=200, blank=True, help_text="As torch.cuda names it.")
    family = models.CharField(max_length=100, blank=True, help_text="Its accelerator's family.")
    accelerator_count = models.PositiveIntegerField(default=0)
    memory_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    driver = models.CharField(max_length=100, blank=True)
    cuda = models.CharField(max_length=100, blank=True)
    torch = models.CharField(max_length=100, blank=True)
    current_job = models.CharField(max_length=100, blank=True, help_text="The check it runs.")
    jobs_done = models.PositiveIntegerField(default=0)
    jobs_failed = models.PositiveIntegerField(default=0)
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["hostname"]

    def __str__(self):
        return self.hostname


class ReferenceCheck(models.Model):
    """One reference check of a result: sent to the agents of the claimed accelerator's family (or to any
    agent, by staff), measured, compared with the throughput the logs imply. It never blocks the result: a
    reviewer decides."""

    class State(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    # Declared where the read side may name it too (leaderboard never imports submissions).
    Verdict = statuses.ReferenceCheckVerdict

    FINAL = {State.DONE, State.FAILED}

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    result = models.ForeignKey(
        "leaderboard.Result", on_delete=models.CASCADE, related_name="reference_checks"
    )
    family = models.CharField(max_length=100, blank=True, help_text="The claimed accelerator's.")
    queue = models.CharField(max_length=100, blank=True, help_text="gpu.<family queue>, or gpu.")
    any_agent = models.BooleanField(default=False, help_text="Sent by staff to any agent.")
    state = models.CharField(
        max_length=10, choices=State.choices, default=State.QUEUED, db_index=True
    )
    attempts = models.PositiveIntegerField(default=0)
    request = models.JSONField(default=dict, blank=True, help_text="What the agent was asked.")
    agent = models.ForeignKey(Agent, on_delete=models.SET_NULL, null=True, blank=True)
    agent_name = models.CharField(max_length=255, blank=True)
    measurement = models.JSONField(
        null=True, blank=True, help_text="What the probe ran and measured."
    )
    measured = models.FloatField(null=True, blank=True, help_text="samples/s per accelerator")
    implied = models.FloatField(null=True, blank=True, help_text="samples/s per accelerator")
    implied_runs = models.JSONField(default=list, blank=True, help_text="Each run's figure.")
    ratio = models.FloatField(null=True, blank=True, help_text="implied ÷ measured")
    tolerance = models.FloatField(null=True, blank=True)
    verdict = models.CharField(max_length=20, choices=Verdict.choices, blank=True)
    message = models.TextField(blank=True, help_text="The verdict in words, or why it failed.")
    reason = models.CharField(max_length=200, blank=True, help_text="Why it was queued.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["result", "-created_at"])]

    def __str__(self):
        return f"reference check {self.uid} ({self.state})"

    @property
    def is_final(self):
        return self.state in self.FINAL
