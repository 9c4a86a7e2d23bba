"""A round's calendar: when uploads open, the deadline and its grace period, the end of review,
and the publication minute; and what that means at a given moment.

Pure but for Django's translation of `when` (a moment in the active language): the round's dates go in
as a Calendar, the moment as `now`.

    upcoming ── opens_at ── open ── deadline_at ── grace ── +grace ── review ── publish_at ── published

A round without dates (imported history, the demo round) has phase "history": the calendar
refuses nothing there, and publication is by `manage.py ingest --publish` or a staff action.
A missing date leaves that boundary out (no opens_at: open from the start; no deadline: open
until publication).
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.utils import dateformat
from django.utils.translation import gettext, pgettext

UPCOMING = "upcoming"
OPEN = "open"
GRACE = "grace"
REVIEW = "review"
PUBLISHED = "published"
HISTORY = "history"
PHASES = (UPCOMING, OPEN, GRACE, REVIEW, PUBLISHED, HISTORY)

# The fields a round file's [calendar] table may set (grace_minutes: after the deadline, uploads are still taken).
FIELDS = ("opens_at", "deadline_at", "grace_minutes", "review_ends_at", "publish_at")


@dataclass(frozen=True)
class Calendar:
    round_name: str = "the round"
    opens_at: datetime | None = None
    deadline_at: datetime | None = None
    grace: timedelta = timedelta(0)
    review_ends_at: datetime | None = None
    publish_at: datetime | None = None

    @property
    def dated(self) -> bool:
        return any((self.opens_at, self.deadline_at, self.review_ends_at, self.publish_at))

    @property
    def closes_at(self) -> datetime | None:
        """The last moment an upload is taken without a reviewer's request: the deadline plus its grace."""
        return self.deadline_at + self.grace if self.deadline_at else None


def when(moment: datetime) -> str:
    """A moment as messages write it: 'Friday 14 March 2025, 17:00 UTC'."""
    moment = moment.astimezone(UTC)
    return dateformat.format(moment, pgettext("date format", "l j F Y, H:i")) + " UTC"


def phase(calendar: Calendar, now: datetime) -> str:
    """The round's phase at `now` (aware datetime)."""
    if not calendar.dated:
        return HISTORY
    if calendar.publish_at is not None and now >= calendar.publish_at:
        return PUBLISHED
    if calendar.opens_at is not None and now < calendar.opens_at:
        return UPCOMING
    if calendar.deadline_at is None or now < calendar.deadline_at:
        return OPEN
    if now < calendar.closes_at:
        return GRACE
    return REVIEW


def review_open(calendar: Calendar, now: datetime) -> bool:
    """Whether objections may be filed and answered: in review, before review_ends_at where one is set."""
    if phase(calendar, now) != REVIEW:
        return False
    return calendar.review_ends_at is None or now < calendar.review_ends_at


def upload_refusal(calendar: Calendar, now: datetime, fix_requested: bool) -> str | None:
    """None if an upload at `now` is taken; else why not, with the date and time that matter.
    During review only a fix a reviewer asked for is taken (fix_requested)."""
    current = phase(calendar, now)
    name = calendar.round_name
    if current == UPCOMING:
        return gettext("Uploads to %(round)s open on %(when)s.") % {
            "round": name,
            "when": when(calendar.opens_at),
        }
    if current == PUBLISHED:
        return gettext("%(round)s was published on %(when)s; it takes no more uploads.") % {
            "round": name,
            "when": when(calendar.publish_at),
        }
    if current == REVIEW and not fix_requested:
        if calendar.grace:
            refusal = gettext(
                "The deadline for %(round)s was %(when)s (with its grace period, until %(grace)s). "
                "During the review only a fix that a reviewer asked for is taken."
            )
        else:
            refusal = gettext(
                "The deadline for %(round)s was %(when)s. During the review only a fix that a "
                "reviewer asked for is taken."
            )
        return refusal % {
            "round": name,
            "when": when(calendar.deadline_at),
            "grace": when(calendar.closes_at) if calendar.grace else "",
        }
    return None
