"""The write side's statuses, declared once where the read side may name them.

A submission's status and a pass of the checks' (a Validation's) are the write side's, yet the read side
reads them: the policy (who takes part in a round's review), the public pages (a withdrawn submission) and
the home page (how many of a round's submissions are checked). `leaderboard` never imports `submissions`
(docs/architecture.md), so the vocabulary lives here, where both may import it: submissions' models take
their choices from it, and the read side names a status by it, never by a string.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _


class SubmissionStatus(models.TextChoices):
    """A submission's life: received → ingesting → checking → finalizing → valid | invalid | failed, then
    published or withdrawn."""

    RECEIVED = "received", _("Received")
    INGESTING = "ingesting", _("Unpacking")
    CHECKING = "checking", _("Checking runs")
    FINALIZING = "finalizing", _("Scoring")
    VALID = "valid", _("Valid")
    INVALID = "invalid", _("Invalid")
    FAILED = "failed", _("Failed")
    PUBLISHED = "published", _("Published")
    WITHDRAWN = "withdrawn", _("Withdrawn")


# Where the pipeline leaves a submission: no step moves it on by itself.
SUBMISSION_FINAL = frozenset(
    {
        SubmissionStatus.VALID,
        SubmissionStatus.INVALID,
        SubmissionStatus.FAILED,
        SubmissionStatus.PUBLISHED,
        SubmissionStatus.WITHDRAWN,
    }
)


class ValidationStatus(models.TextChoices):
    """One pass of the round's rules over a submission; its verdict, once done, is SubmissionStatus.VALID or
    INVALID."""

    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    ABANDONED = "abandoned", _("Abandoned")


class ReferenceCheckVerdict(models.TextChoices):
    """What a reference check on a GPU agent found: whether the throughput it measured bears out the one the
    logs imply (submissions/refchecks/verdict.py computes it, pure, with these values)."""

    CONSISTENT = "consistent", _("Consistent")
    IMPLAUSIBLY_FAST = "implausibly-fast", _("Implausibly fast")
    COULD_NOT_RUN = "could-not-run", _("Could not run")
    OTHER_HARDWARE = "other-hardware", _("Measured on other hardware")
    CPU = "cpu", _("CPU measurement, not compared")
