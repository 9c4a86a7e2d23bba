"""Who may see what, in one place for pages, charts, exports and the API.

The public: only published results of published systems, and never one with blocking
findings (errors count as blocking unless the result's findings are advisory: imported
history), and nothing of a round with a publication minute before that minute. A public
result with any findings is marked on the pages.

Signed-in users see, besides, whole submissions (their results, runs, findings and logs):
- a member of an organisation: every submission of that organisation;
- during a round's review phase, a member of an organisation that submitted to the round
  (leaderboard/participation.py: a failed or withdrawn submission does not count): every
  submission of that round (MLPerf's peer review);
- a reviewer of a round: every submission of that round; staff: everything;
- anyone: the submissions they uploaded themselves.
What a user may not see answers 404, as if it did not exist: `Viewer` gives the filters
(`submission_filter`, `result_filter`), `may_see` the answer for one submission.

A page that shows a result (or a system) to someone who may see it before it is public marks it
(`with_public_flag`) and says why it is not public (`why_not_public`); such a page is never cached.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import BooleanField, ExpressionWrapper, Q
from django.db.models.functions import Now
from django.utils import timezone

from . import calendar, participation
from .models import Result, Round, Run, System

VISIBLE = Q(published=True, system__published=True) & (Q(error_count=0) | Q(advisory=True))


def embargo_over(now: datetime | None = None, path: str = "system__round__") -> Q:
    """The rows of rounds whose publication minute has come (or that have none)."""
    return Q(**{f"{path}publish_at__isnull": True}) | Q(**{f"{path}publish_at__lte": now or Now()})


def results():
    """Public results. The embargo is checked here as well as by publication: a result of a live round
    marked published by any other path still shows to nobody before the round's minute."""
    return Result.objects.filter(VISIBLE & embargo_over())


def with_public_flag(queryset):
    """Results (of results_for) with `is_public`: whether the public sees each one, by the same rule
    as results(), so a page tells the public ones from the others without a second rule."""
    return queryset.annotate(
        is_public=ExpressionWrapper(VISIBLE & embargo_over(), output_field=BooleanField())
    )


def why_not_public(result, now: datetime | None = None) -> str:
    """Why the public does not see `result` (one that is not in results()), in words for its page:
    'withdrawn, ...', 'held by a blocking finding, ...', 'publication on Friday 14 March 2025, 17:00 UTC'.
    Reads result.system.round and result.system.submission (join them in)."""
    now = now or timezone.now()
    system = result.system
    # The submission's status is the write side's (submissions.Submission.Status.WITHDRAWN).
    if result.withdrawn or system.submission.status == "withdrawn":
        return "withdrawn, it will not be published"
    reasons = []
    if result.error_count and not result.advisory:
        reasons.append("held by a blocking finding, a fix is required before it can be published")
    publish_at = system.round.publish_at
    if publish_at is not None and publish_at > now:
        reasons.append(f"publication on {calendar.when(publish_at)}")
    elif not reasons:
        published = system.round.published_at is not None or publish_at is not None
        reasons.append("not published with its round" if published else "not published yet")
    return "; ".join(reasons)


def systems():
    return System.objects.filter(published=True, results__in=results()).distinct()


def runs():
    return Run.objects.filter(result__in=results())


@dataclass(frozen=True)
class Viewer:
    """What one user may see beyond the public, worked out once (per request) by viewer()."""

    user_id: int | None = None
    staff: bool = False
    organisations: frozenset[int] = field(default_factory=frozenset)
    reviewed_rounds: frozenset[int] = field(default_factory=frozenset)
    peer_rounds: frozenset[int] = field(default_factory=frozenset)

    @property
    def anonymous(self) -> bool:
        return self.user_id is None

    def submission_filter(self, path: str = "") -> Q:
        """A Q over submissions.Submission (or, with `path` such as "system__submission__", over a model
        that leads to one) for the submissions this viewer may see whole."""
        if self.staff:
            return Q()
        if self.anonymous:
            return Q(pk__in=[])
        rounds = self.reviewed_rounds | self.peer_rounds
        return (
            Q(**{f"{path}organisation_id__in": self.organisations})
            | Q(**{f"{path}round_id__in": rounds})
            | Q(**{f"{path}uploaded_by_id": self.user_id})
        )

    def result_filter(self) -> Q:
        """A Q over leaderboard.Result: public, or of a submission this viewer may see."""
        if self.staff:
            return Q()
        return (VISIBLE & embargo_over()) | self.submission_filter("system__submission__")

    def may_see(self, submission) -> bool:
        """The same rule as submission_filter, for one submission already read."""
        if self.staff:
            return True
        if self.anonymous:
            return False
        return (
            submission.organisation_id in self.organisations
            or submission.round_id in self.reviewed_rounds | self.peer_rounds
            or submission.uploaded_by_id == self.user_id
        )

    def reviews(self, round_) -> bool:
        """Reviewer of the round (or staff): sees all of it and decides objections."""
        return self.staff or round_.pk in self.reviewed_rounds

    def member_of(self, organisation) -> bool:
        return organisation is not None and organisation.pk in self.organisations


ANONYMOUS = Viewer()


def viewer(user, now: datetime | None = None) -> Viewer:
    """What `user` (a User or AnonymousUser) may see at `now`."""
    if user is None or not user.is_authenticated:
        return ANONYMOUS
    if user.is_staff:
        return Viewer(user.pk, staff=True)
    now = now or timezone.now()
    organisations = frozenset(user.memberships.values_list("organisation_id", flat=True))
    reviewed = frozenset(user.reviewed_rounds.values_list("pk", flat=True))
    peer = frozenset()
    if organisations:
        # Rounds the user's organisations submitted to that are in their review phase now.
        submitted = Round.objects.filter(
            Q(publish_at__isnull=True) | Q(publish_at__gt=now),
            participation.rounds_of(organisations),
            deadline_at__lte=now,
        )
        peer = frozenset(r.pk for r in submitted if r.phase(now) == calendar.REVIEW)
    return Viewer(user.pk, False, organisations, reviewed, peer)


def results_for(who: Viewer):
    """The results `who` may see: the public ones and those of submissions they may see."""
    return Result.objects.filter(who.result_filter())


def runs_for(who: Viewer):
    return Run.objects.filter(result__in=results_for(who))


def findings_note(error_count: int, warning_count: int, advisory: bool) -> str:
    """'' for a clean result, else what a reader should know, e.g. '2 errors (advisory), 1 warning'."""
    parts = []
    if error_count:
        parts.append(
            f"{error_count} error{'s' if error_count != 1 else ''}"
            + (" (advisory)" if advisory else "")
        )
    if warning_count:
        parts.append(f"{warning_count} warning{'s' if warning_count != 1 else ''}")
    return ", ".join(parts)
