"""The catalogue (rounds, benchmarks) and the published records (systems, results, runs).

Records are written by the `submissions` app; this app only reads them. A result is shown
to the public only once `published` is set.
"""

import math
import secrets
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .catalogue import calendar as round_calendar
from .catalogue.organisations import organisation_of
from .catalogue.units import minutes


def new_cache_token() -> str:
    return secrets.token_hex(8)


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class UploadedJSONField(models.JSONField):
    """JSON read from uploaded files. NaN and infinities, which Python's json reads and writes as bare
    words that PostgreSQL refuses, are stored as the strings "NaN", "Infinity" and "-Infinity"."""

    def get_prep_value(self, value):
        return super().get_prep_value(_finite(value))


class Round(models.Model):
    key = models.SlugField(unique=True, help_text="e.g. training-v5.1")
    name = models.CharField(max_length=100)
    ruleset = models.CharField(max_length=20, help_text="mlperf-logging ruleset, e.g. 5.1.0")
    log_format = models.CharField(max_length=20)
    submission_date = models.DateField(null=True, blank=True)
    publication_date = models.DateField(null=True, blank=True)
    reference_system = models.CharField(max_length=200, blank=True)
    notes = models.TextField(blank=True)
    history = models.BooleanField(
        default=False, help_text="Imported history: findings are advisory."
    )
    published_tree = models.URLField(
        blank=True,
        help_text="Where MLCommons published the round's results, at the commit the portal's copy was "
        "taken from (e.g. https://github.com/mlcommons/training_results_v5.1/tree/441d65f): a result's "
        "code link is <this>/<submitter folder>/benchmarks, as MLCommons' summary links it.",
    )
    results_repository = models.URLField(
        blank=True,
        help_text="The git repository where MLCommons published the round's results (e.g. "
        "https://github.com/mlcommons/training_results_v5.1): what `manage.py import_round` fetches, at "
        "published_tree's commit where that names one, and where readers of a round not imported here are sent.",
    )
    require_init_stop_before_run_start = models.BooleanField(default=False)
    rcp_normalised = models.BooleanField(
        default=True,
        help_text="The ruleset scales a score by its RCP factor (mlperf-logging checks RCPs from 1.0.0; "
        "MLCommons published v1.0 unscaled).",
    )
    blocking_rules = models.JSONField(
        default=list,
        blank=True,
        help_text="Rule ids of the portal's own checks (not mlperf-logging's) that this round makes blocking; "
        "unlisted, they are warnings for reviewers.",
    )
    cache_token = models.CharField(
        max_length=32,
        default=new_cache_token,
        editable=False,
        help_text="Part of every cache key of the round's pages and exports; replaced on publication "
        "(leaderboard.cache.invalidate_round).",
    )
    changed_at = models.DateTimeField(
        default=timezone.now,
        editable=False,
        help_text="When the round's published data last changed, set with cache_token: the API's "
        "Last-Modified.",
    )
    # The calendar of a live round (leaderboard/catalogue/calendar.py), from the round file's [calendar] table or the
    # admin; imported history rounds have none.
    opens_at = models.DateTimeField(null=True, blank=True, help_text="Uploads open.")
    deadline_at = models.DateTimeField(null=True, blank=True, help_text="The submission deadline.")
    grace_minutes = models.PositiveIntegerField(
        default=0, help_text="Uploads are still taken this long after the deadline."
    )
    review_ends_at = models.DateTimeField(
        null=True, blank=True, help_text="Objections close (peer review ends)."
    )
    publish_at = models.DateTimeField(
        null=True, blank=True, help_text="Every approved result goes public at this minute."
    )
    calendar_edited = models.JSONField(
        default=list,
        blank=True,
        editable=False,
        help_text="Calendar fields set by staff in the admin: the round file no longer overrides them.",
    )
    published_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="When the round was published."
    )
    reviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="reviewed_rounds",
        help_text="Users who review this round: they see all of its submissions and decide objections.",
    )

    class Meta:
        ordering = ["-publication_date", "key"]

    def __str__(self):
        return self.name

    @property
    def calendar(self) -> round_calendar.Calendar:
        return round_calendar.Calendar(
            round_name=self.name,
            opens_at=self.opens_at,
            deadline_at=self.deadline_at,
            grace=timedelta(minutes=self.grace_minutes),
            review_ends_at=self.review_ends_at,
            publish_at=self.publish_at,
        )

    def phase(self, now) -> str:
        return round_calendar.phase(self.calendar, now)

    def get_absolute_url(self):
        return reverse("leaderboard:round", args=[self.key])


class RoundImport(models.Model):
    """A published round being brought in, or the last time it was: by `manage.py import_round` (staff start it
    from the round's page too) or by `make run`'s loading of the shared rounds. One row per round, written by
    the command as it goes and read by the rounds' rows and the round page, so that a round on its way says so
    from its first second. Once its submitters are handed over ("checking"), the round's submissions tell how
    far the workers are (overview.round_counts)."""

    class State(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        FETCHING = "fetching", "Fetching"
        SUBMITTING = "submitting", "Submitting"
        CHECKING = "checking", "Checking"
        DONE = "done", "Imported"
        FAILED = "failed", "Failed"

    # Still handing submitters over: nobody else may start an import of the round (unless it is stale).
    RUNNING = (State.QUEUED, State.FETCHING, State.SUBMITTING)

    round = models.OneToOneField(Round, on_delete=models.CASCADE, related_name="import_job")
    state = models.CharField(max_length=12, choices=State.choices, default=State.QUEUED)
    source = models.CharField(
        max_length=500, blank=True, help_text="A git URL, a folder or a tarball."
    )
    commit = models.CharField(
        max_length=40, blank=True, help_text="The commit fetched (git sources)."
    )
    step = models.CharField(max_length=300, blank=True, help_text="What it is doing, in words.")
    done = models.PositiveIntegerField(default=0, help_text="Submitters fetched and handed over.")
    total = models.PositiveIntegerField(
        default=0, help_text="Submitters in the source (git sources)."
    )
    received_bytes = models.BigIntegerField(default=0, help_text="Bytes git received in this run.")
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.round.key}: {self.state}"

    @property
    def running(self) -> bool:
        return self.state in self.RUNNING


class Benchmark(models.Model):
    class Scoring(models.TextChoices):
        OLYMPIC = "olympic", "Olympic mean"
        FIRST_CONVERGING = "first-converging", "Olympic mean of the first converging runs"

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="benchmarks")
    key = models.SlugField()
    name = models.CharField(max_length=200)
    quality_target = models.FloatField(null=True, blank=True)
    higher_is_better = models.BooleanField(default=True)
    required_runs = models.PositiveIntegerField()
    counted_runs = models.PositiveIntegerField(
        null=True, blank=True, help_text="For first-converging scoring."
    )
    scoring = models.CharField(max_length=20, choices=Scoring.choices, default=Scoring.OLYMPIC)
    reference_time_s = models.FloatField(null=True, blank=True)
    aliases = models.JSONField(
        default=list, blank=True, help_text="Folder names that mean this benchmark."
    )
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["round", "position"]
        constraints = [
            models.UniqueConstraint(fields=["round", "key"], name="unique_benchmark_key")
        ]

    def __str__(self):
        return f"{self.round.key}/{self.key}"


class Submitter(models.Model):
    name = models.CharField(max_length=200, unique=True, help_text="The name as submitted.")
    organisation = models.CharField(
        max_length=200,
        blank=True,
        db_index=True,
        editable=False,
        help_text="The organisation the name belongs to, by leaderboard/catalogue/organisations.toml: what filters, "
        "progress, compare and the API group by.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        # Derived from the name on every save, so a row made anywhere (ingest, admin, fixtures) is filed.
        self.organisation = organisation_of(self.name)
        if kwargs.get("update_fields") is not None and "name" in kwargs["update_fields"]:
            kwargs["update_fields"] = {*kwargs["update_fields"], "organisation"}
        super().save(*args, **kwargs)


class Division(models.TextChoices):
    CLOSED = "closed", _("Closed")
    OPEN = "open", _("Open")


class Category(models.TextChoices):
    """Availability, in MLCommons' words for it (the summary's sections: mlperf-logging's result_summarizer)."""

    CLOUD = "cloud", _("Available cloud")
    ON_PREMISE = "onprem", _("Available on-premise")
    PREVIEW = "preview", _("Preview")
    RESEARCH = "research", _("Research, Development, or Internal (RDI)")
    UNKNOWN = "unknown", _("Unknown")


class System(models.Model):
    """One hardware and software configuration of one submitter in one submission."""

    submission = models.ForeignKey(
        "submissions.Submission", on_delete=models.CASCADE, related_name="systems"
    )
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="systems")
    submitter = models.ForeignKey(Submitter, on_delete=models.PROTECT, related_name="systems")
    key = models.CharField(max_length=200, help_text="The system's folder name within the bundle.")
    name = models.CharField(max_length=300)
    division = models.CharField(max_length=10, choices=Division.choices, default=Division.CLOSED)
    category = models.CharField(max_length=10, choices=Category.choices, default=Category.UNKNOWN)
    accelerator_model = models.CharField(max_length=200, blank=True)
    accelerator_count = models.PositiveIntegerField(null=True, blank=True)
    processor_model = models.CharField(max_length=200, blank=True)
    processor_count = models.PositiveIntegerField(null=True, blank=True)
    nodes = models.PositiveIntegerField(null=True, blank=True)
    framework = models.CharField(max_length=300, blank=True)
    interconnect = models.CharField(max_length=300, blank=True)
    published_submitter = models.CharField(
        max_length=300,
        blank=True,
        help_text="The organisation as the description's `submitter` names it, which MLCommons shows "
        "(`CoreWeave + IBM + NVIDIA` for the folder `IBM+CoreWeave+NVIDIA`); blank where none is stated.",
    )
    description = UploadedJSONField(default=dict, blank=True)
    description_path = models.CharField(max_length=500, blank=True)
    published = models.BooleanField(default=False, db_index=True)
    uid = models.UUIDField(
        default=uuid.uuid4, unique=True, editable=False, help_text="Its id outside the portal."
    )

    class Meta:
        ordering = ["submitter__name", "key"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission", "key"], name="unique_system_per_submission"
            )
        ]

    def __str__(self):
        return f"{self.submitter} {self.key}"

    @property
    def organisation_shown(self) -> str:
        """Who readers see as the system's organisation: the description's submitter, else the folder."""
        return self.published_submitter or self.submitter.name

    def get_absolute_url(self):
        return reverse("leaderboard:system", args=[self.round.key, self.submitter.name, self.key])


class Result(models.Model):
    """One system on one benchmark: its runs and their score."""

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="results")
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="results")
    path = models.CharField(max_length=500, help_text="Bundle-relative folder of the result.")
    score_s = models.FloatField(
        null=True, blank=True, help_text="Olympic mean time to train, seconds."
    )
    speedup = models.FloatField(null=True, blank=True)
    scaling_factor = models.FloatField(
        default=1.0,
        help_text="RCP normalisation computed by the portal from the ruleset's RCPs (1 where none applies).",
    )
    claimed_scaling_factor = models.FloatField(
        null=True,
        blank=True,
        help_text="What the bundle's scaling.json says: only compared, never used.",
    )
    runs_counted = models.PositiveIntegerField(default=0)
    score_message = models.CharField(max_length=500, blank=True, help_text="Why there is no score.")
    published = models.BooleanField(default=False, db_index=True)
    withdrawn = models.BooleanField(
        default=False,
        help_text="Withdrawn before publication, by its submitter or by a reviewer's decision: never published.",
    )
    public_id = models.CharField(
        max_length=20,
        null=True,
        blank=True,
        unique=True,
        help_text="MLPerf's public id (e.g. 5.1-0042): given at first publication, kept when withdrawn, never reused.",
    )
    # Validation outcome, copied here by the write side so pages need not read findings.
    error_count = models.PositiveIntegerField(default=0)
    warning_count = models.PositiveIntegerField(default=0)
    advisory = models.BooleanField(
        default=False, help_text="Findings are advisory (imported history)."
    )
    energy_j = models.FloatField(
        null=True,
        blank=True,
        help_text="Energy to train in joules, where the submission measured power (blank otherwise): "
        "the mean energy of the runs the time score counts, times its RCP factor.",
    )
    power_result = models.BooleanField(
        default=False,
        db_index=True,
        help_text="The bundle carries power logs for it (MLPerf Power, Training v4.0 on).",
    )
    energy_message = models.CharField(
        max_length=500, blank=True, help_text="Why a power result has no energy score."
    )
    uid = models.UUIDField(
        default=uuid.uuid4, unique=True, editable=False, help_text="Its id outside the portal."
    )

    class Meta:
        ordering = ["system", "benchmark"]
        constraints = [
            models.UniqueConstraint(fields=["system", "benchmark"], name="unique_result")
        ]

    def __str__(self):
        return f"{self.system} {self.benchmark.key}"

    @property
    def score_minutes(self):
        return minutes(self.score_s)

    def get_absolute_url(self):
        system = self.system
        return reverse(
            "leaderboard:result",
            args=[system.round.key, system.submitter.name, system.key, self.benchmark.key],
        )


class PublicIdSequence(models.Model):
    """The last public id number given under one prefix (a ruleset's major.minor, e.g. "5.1")."""

    prefix = models.CharField(max_length=10, unique=True)
    last = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"{self.prefix}-{self.last:04d}"


class Run(models.Model):
    """One `result_N.txt` log and what was read from it."""

    result = models.ForeignKey(Result, on_delete=models.CASCADE, related_name="runs")
    index = models.PositiveIntegerField(help_text="N of result_N.txt")
    path = models.CharField(max_length=500)
    checked = models.BooleanField(default=False)
    success = models.BooleanField(default=False)
    failure_reason = models.CharField(max_length=500, blank=True)
    time_to_train_s = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=50, blank=True, help_text="run_stop status as logged")
    seed = models.CharField(max_length=100, blank=True)
    hyperparameters = UploadedJSONField(default=dict, blank=True)
    eval_curve = UploadedJSONField(default=list, blank=True)
    eval_x = models.CharField(max_length=10, blank=True)
    submission_keys = UploadedJSONField(default=dict, blank=True)
    convergence = UploadedJSONField(
        null=True,
        blank=True,
        help_text="What mlperf-logging's RCP reader read from the log, for the result's RCP check.",
    )
    power_files = models.JSONField(
        default=list,
        blank=True,
        help_text="Bundle-relative paths of its power logs (power/<run>/node_N.txt, sw_N.txt).",
    )
    energy_j = models.FloatField(
        null=True, blank=True, help_text="Energy to train in joules, from its power logs."
    )
    power_trace = models.JSONField(
        default=dict,
        blank=True,
        help_text="Each node's power for the run's plot: {run_s, nodes: {node_N: {s: [s from run_start], w: [W]}}}.",
    )
    counted = models.BooleanField(default=False, help_text="Among the runs that make the score.")
    dropped = models.BooleanField(default=False, help_text="Dropped as fastest or slowest.")

    class Meta:
        ordering = ["result", "index"]
        constraints = [models.UniqueConstraint(fields=["result", "index"], name="unique_run_index")]

    def __str__(self):
        return self.path


class CloudPrice(models.Model):
    """One line of a round's dated price table: what an instance or system costs per hour on demand.

    Cloud scale = the system's price ÷ the reference system's price (the line with `reference`).
    Lines come from leaderboard/catalogue/prices/<round>.toml (see leaderboard/catalogue/prices.py) and are edited by
    staff in the admin; `status` says how far a number can be trusted.
    """

    class Status(models.TextChoices):
        SOURCED = "sourced", "Sourced: checked against the cited source"
        UNVERIFIED = "unverified", "Unverified: from a public price list, not yet checked"
        PLACEHOLDER = "placeholder", "Placeholder: no price known yet"

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="prices")
    reference = models.BooleanField(
        default=False, help_text="The round's reference system (cloud scale 1)."
    )
    submitter = models.CharField(
        max_length=200, blank=True, help_text="Submitter of the priced system."
    )
    system_key = models.CharField(
        max_length=200,
        blank=True,
        help_text="Key (folder name) of the priced system; or leave blank and give its name.",
    )
    system_name = models.CharField(
        max_length=300,
        blank=True,
        help_text="Prices every system of the submitter with this name (when no key is given).",
    )
    provider = models.CharField(max_length=100)
    instance = models.CharField(
        max_length=200, help_text="Instance type or system as the provider sells it."
    )
    price_per_hour = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="On-demand price per hour; blank if unknown.",
    )
    currency = models.CharField(max_length=3, default="USD")
    as_of = models.DateField(null=True, blank=True, help_text="The date the price applies to.")
    source = models.CharField(
        max_length=500, blank=True, help_text="Where the price comes from (URL or citation)."
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PLACEHOLDER)
    notes = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    uid = models.UUIDField(
        default=uuid.uuid4, unique=True, editable=False, help_text="Its id outside the portal."
    )

    class Meta:
        ordering = ["round", "-reference", "submitter", "system_key"]
        constraints = [
            models.UniqueConstraint(
                fields=["round"],
                condition=models.Q(reference=True),
                name="one_reference_price_per_round",
            ),
            models.UniqueConstraint(
                fields=["round", "submitter", "system_key", "system_name"],
                condition=models.Q(reference=False),
                name="one_price_per_system",
            ),
        ]

    def __str__(self):
        what = (
            "reference"
            if self.reference
            else f"{self.submitter}/{self.system_key or self.system_name}"
        )
        return f"{self.round.key} {what}: {self.provider} {self.instance}"

    @property
    def known(self) -> bool:
        return self.price_per_hour is not None and self.price_per_hour > 0
