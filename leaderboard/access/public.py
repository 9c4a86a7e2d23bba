"""What the public sees, for pages, charts, exports and the API.

The public: only published results of published systems, and never one with blocking
findings (errors count as blocking unless the result's findings are advisory: imported
history), and nothing of a round with a publication minute before that minute. A public
result with any findings is marked on the pages.

Who sees more than the public (members, reviewers, staff), and who may do what, is policy.py's:
it builds on VISIBLE and embargo_over here. A page that shows a result (or a system) to someone who
may see it before it is public marks it (`with_public_flag`) and says why it is not public
(`why_not_public`); such a page is never cached.
"""

from datetime import datetime

from django.db.models import BooleanField, ExpressionWrapper, Q
from django.db.models.functions import Now
from django.utils import timezone
from django.utils.translation import gettext, ngettext, pgettext

from ..catalogue import calendar
from ..models import Result, Run, System
from ..statuses import SubmissionStatus

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
    if result.withdrawn or system.submission.status == SubmissionStatus.WITHDRAWN:
        return gettext("withdrawn, it will not be published")
    reasons = []
    if result.error_count and not result.advisory:
        reasons.append(
            gettext("held by a blocking finding, a fix is required before it can be published")
        )
    publish_at = system.round.publish_at
    if publish_at is not None and publish_at > now:
        reasons.append(gettext("publication on %(when)s") % {"when": calendar.when(publish_at)})
    elif not reasons:
        published = system.round.published_at is not None or publish_at is not None
        reasons.append(
            gettext("not published with its round") if published else gettext("not published yet")
        )
    return pgettext("between items of a list", "; ").join(reasons)


def systems():
    return System.objects.filter(published=True, results__in=results()).distinct()


def runs():
    return Run.objects.filter(result__in=results())


def findings_note(error_count: int, warning_count: int, advisory: bool) -> str:
    """'' for a clean result, else what a reader should know, e.g. '2 errors (advisory), 1 warning'."""
    parts = []
    if error_count:
        errors = ngettext("%(n)d error", "%(n)d errors", error_count) % {"n": error_count}
        parts.append(errors + (" " + gettext("(advisory)") if advisory else ""))
    if warning_count:
        parts.append(
            ngettext("%(n)d warning", "%(n)d warnings", warning_count) % {"n": warning_count}
        )
    return pgettext("between items of a list", ", ").join(parts)
