"""Who may see or do what: the one place, for the pages, the API and the tasks of every app.

Every answer starts from a Viewer: who one user is (staff; the organisations they belong to and
those they administer; the rounds they review; the rounds whose review their organisations take
part in), worked out once (per request) by `viewer(user)`. The rules below are plain functions of
a Viewer, the record asked about and the time. They read the records' attributes and never import
the write side: its rows arrive as arguments, and its statuses and roles are named as strings.

    see       results, systems, runs: results_for, runs_for (the public's: public.py);
              whole submissions: Viewer.submission_filter, Viewer.may_see;
              objections: objection_filter, may_see_objection;
              chunked uploads under way: Viewer.upload_filter;
              an organisation's members: may_see_members
              the rounds one reviews: rounds_reviewed; the objections that concern one's
              organisations: objections_concerning; reference checks: reference_check_filter
    upload    upload_organisations, upload_refusal (a member uploads for their own organisation
              only), may_upload_history
    object    objecting_organisations, objecting_for, may_object, may_object_to
    answer    may_reply, reply_refusal, reply_side
    decide    may_decide
    withdraw  may_withdraw
    publish   may_publish (and the staff's pages of the rounds' calendars)
    import    may_import_round
    members   may_manage_members, may_join
    webhooks  may_manage_webhooks, webhook_filter
    check     may_request_check, may_revalidate, may_see_agents
    hear      told_of_submission, told_of_objection, told_of_round, told_of_deadline, may_hear,
              organisation_may_hear (who notifications/ tells of an event, a webhook included:
              the candidates, then each one's view)

A page that only some may open is wrapped in page_for(rule); an API view names its rules as DRF
permission classes (submissions/*/api.py), composed with DRF's operators (`&`, `|`, `~`).

Besides the public's results, signed-in users see whole submissions (their results, runs, findings
and logs): a member of an organisation every submission of that organisation; during a round's review
phase, a member of an organisation that takes part in the round's review every submission of that round
(MLPerf's peer review: "who takes part in a round's review" below); a reviewer of a round every submission of
that round; staff everything; anyone the submissions they uploaded themselves.

When a round takes uploads, objections and decisions is its calendar's (calendar.py: the moments);
who, here. What a record's state allows (an objection already decided, a submission already withdrawn)
is its room's. What a user may not see answers 404, as if it did not exist; what they see but may not
do, 403.

A Viewer also marks, on a page, what is not public yet: public.py (with_public_flag, why_not_public).
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.apps import apps
from django.contrib.auth.decorators import user_passes_test
from django.db.models import Q
from django.utils import timezone
from rest_framework.permissions import SAFE_METHODS, BasePermission

from ..catalogue import calendar
from ..models import Result, Round, Run
from ..statuses import SubmissionStatus, ValidationStatus
from .public import VISIBLE, embargo_over

ADMIN = "admin"  # accounts.Membership.Role.ADMIN: an organisation's admin manages its members


@dataclass(frozen=True)
class Viewer:
    """Who one user is, for every rule here, worked out once (per request) by viewer()."""

    user_id: int | None = None
    staff: bool = False
    organisations: frozenset[int] = field(default_factory=frozenset)
    reviewed_rounds: frozenset[int] = field(default_factory=frozenset)
    peer_rounds: frozenset[int] = field(default_factory=frozenset)
    administers: frozenset[int] = field(default_factory=frozenset)

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

    def upload_filter(self) -> Q:
        """A Q over submissions.Upload for the chunked uploads this viewer may list, follow and go on with:
        an upload under way is its uploader's alone (staff's too; its submission, once complete, is seen
        by the submission rules)."""
        if self.anonymous:
            return Q(pk__in=[])
        return Q(uploaded_by_id=self.user_id)

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
    """Who `user` (a User or AnonymousUser) is at `now`."""
    if user is None or not user.is_authenticated:
        return ANONYMOUS
    memberships = list(user.memberships.values_list("organisation_id", "role"))
    organisations = frozenset(organisation for organisation, _ in memberships)
    administers = frozenset(organisation for organisation, role in memberships if role == ADMIN)
    if user.is_staff:
        return Viewer(user.pk, True, organisations, administers=administers)
    now = now or timezone.now()
    reviewed = frozenset(user.reviewed_rounds.values_list("pk", flat=True))
    peer = frozenset()
    if organisations:
        # Rounds in their review phase now that the user's organisations take part in.
        in_review = Q(submission__round__deadline_at__lte=now) & (
            Q(submission__round__publish_at__isnull=True) | Q(submission__round__publish_at__gt=now)
        )
        peer = frozenset(
            round_.pk
            for round_, _ in _review_parties(in_review, organisations)
            if round_.phase(now) == calendar.REVIEW
        )
    return Viewer(user.pk, False, organisations, reviewed, peer, administers)


# -- who takes part in a round's review -----------------------------------------------------------
#
# MLCommons' submission rules (mlcommons/policies, submission_rules.adoc, "Visibility of results and
# code during review"): during review the submitters inspect all results and code, the public none; and
# "How to Submit": a submission is confirmed after the submission checker has shown its results, or it is
# disregarded; a results summary is distributed half an hour after the deadline, and each submitter is
# assigned others to review by its number of results. A bundle in which the checker scores nothing is no
# submitter's: the portal's own checker stands in for MLCommons', and it must have scored something.
#
# So an organisation takes part in a round's review (reads the others' unpublished submissions, objects
# to them) when one of its submissions to the round, neither failed nor withdrawn, had a pass of the
# portal's checks (submissions.Validation) that scored at least one result, and that pass was the check
# of the bundle as uploaded, or started before the round's uploads closed (its deadline and grace).
#
# The rights are fixed when uploads close, as MLCommons' results summary is: a re-validation begun later
# (after a rules fix, or one asked for by the submitter) gives none to a bundle that scored nothing by
# then, or every submitter could buy the others' results with a junk upload and a later fix; and a pass
# that loses a score later takes none away from an organisation that reviewed in good faith (its
# objections stand; the reviewers decide what the new findings mean). The first check of a bundle counts
# whenever it ends, so that an upload taken in time and checked in the rush after the deadline is not
# shut out. Withdrawing or failing the submission as a whole leaves the round, as before.

NOT_TAKING_PART = (SubmissionStatus.FAILED, SubmissionStatus.WITHDRAWN)


def buys_review_rights(number: int, started_at: datetime, closes_at: datetime | None) -> bool:
    """Whether a finished pass that scored a result gives its organisation a part in the round's review:
    the check of the bundle as uploaded (its first pass), or a pass started before uploads closed."""
    return number == 1 or closes_at is None or started_at <= closes_at


def _review_parties(which: Q, organisations) -> set[tuple[Round, int]]:
    """(round, organisation) for each of `organisations` that takes part in the review of a round, among
    the passes `which` picks (a Q over submissions.Validation: submission__round__...)."""
    passes = (
        apps.get_model("submissions", "Validation")
        .objects.filter(
            which,
            submission__organisation_id__in=organisations,
            status=ValidationStatus.DONE,
            scored__gt=0,
        )
        .exclude(submission__status__in=NOT_TAKING_PART)
        .select_related("submission__round")
    )
    return {
        (p.submission.round, p.submission.organisation_id)
        for p in passes
        if buys_review_rights(p.number, p.started_at, p.submission.round.calendar.closes_at)
    }


# -- see ------------------------------------------------------------------------------------------


def results_for(who: Viewer):
    """The results `who` may see: the public ones and those of submissions they may see."""
    return Result.objects.filter(who.result_filter())


def runs_for(who: Viewer):
    return Run.objects.filter(result__in=results_for(who))


def objection_filter(who: Viewer) -> Q:
    """A Q over submissions.Objection: staff all; a reviewer those of their rounds; a member those
    filed by or against their organisations."""
    if who.staff:
        return Q()
    if who.anonymous:
        return Q(pk__in=[])
    return (
        Q(from_organisation_id__in=who.organisations)
        | Q(against_organisation_id__in=who.organisations)
        | Q(round_id__in=who.reviewed_rounds)
    )


def _parties(objection) -> set[int]:
    return {objection.from_organisation_id, objection.against_organisation_id}


def may_see_objection(who: Viewer, objection) -> bool:
    """The same rule as objection_filter, for one objection already read."""
    return who.reviews(objection.round) or bool(_parties(objection) & who.organisations)


def objections_concerning(who: Viewer) -> Q:
    """A Q over submissions.Objection: those filed by or against `who`'s organisations (of those they
    may see, the ones that are theirs to follow)."""
    return Q(from_organisation_id__in=who.organisations) | Q(
        against_organisation_id__in=who.organisations
    )


def rounds_reviewed(who: Viewer) -> Q:
    """A Q over leaderboard.Round: the rounds `who` reviews (staff: every round with a calendar)."""
    if who.staff:
        return ~Q(publish_at=None)
    return Q(pk__in=who.reviewed_rounds)


def reference_check_filter(who: Viewer) -> Q:
    """A Q over submissions.ReferenceCheck: the checks of the results `who` may see."""
    if who.staff:
        return Q()
    return Q(result__in=results_for(who))


def may_see_members(who: Viewer, organisation) -> bool:
    return who.staff or organisation.pk in who.organisations


# -- act ------------------------------------------------------------------------------------------


def upload_organisations(who: Viewer) -> frozenset[int]:
    """The organisations `who` uploads for: their own."""
    return who.organisations


def may_upload_history(who: Viewer) -> bool:
    """Staff upload to a round of imported history (they import it); others to live rounds only."""
    return who.staff


def upload_refusal(who: Viewer, organisation) -> str | None:
    """Why `who` may not upload for `organisation`, or None. Asked at every step of an upload: a member
    removed while an upload is open may not go on with it."""
    if who.member_of(organisation):
        return None
    return (
        f"You upload for your own organisation only: you are not a member of {organisation.name}."
    )


def objecting_organisations(who: Viewer, round_) -> set[int]:
    """The organisations `who` may object for in the round: theirs that take part in its review (see
    "who takes part in a round's review" above)."""
    if not who.organisations:
        return set()
    return {org for _, org in _review_parties(Q(submission__round=round_), who.organisations)}


def objecting_for(
    mine: set[int], submission, organisation_id: int | None = None
) -> tuple[set[int], str | None]:
    """Of `mine` (objecting_organisations of the submission's round), those that may object to
    `submission` (`organisation_id`: that one only), and why none may, if none: an organisation
    objects for itself, and never to its own submission."""
    if organisation_id is not None:
        if organisation_id not in mine:
            return set(), "You may object only for an organisation you belong to."
        mine = {organisation_id}
    mine = set(mine) - {submission.organisation_id}
    if not mine:
        return set(), "An organisation does not object to its own submission."
    return mine, None


def may_object(who: Viewer, round_, now: datetime | None = None) -> bool:
    """Whether `who` may file objections in the round now (a page shows the form or not)."""
    now = now or timezone.now()
    return calendar.review_open(round_.calendar, now) and bool(objecting_organisations(who, round_))


def may_object_to(who: Viewer, submission, now: datetime | None = None) -> bool:
    """may_object, against another organisation's submission."""
    return submission.organisation_id not in who.organisations and may_object(
        who, submission.round, now
    )


def may_reply(who: Viewer, objection) -> bool:
    """The objection's parties and the round's reviewers write in its thread."""
    return may_see_objection(who, objection)


def reply_refusal(who: Viewer, objection, now: datetime | None = None) -> str | None:
    """Why `who` (who may_reply) may not write in the objection's thread now, or None. The parties
    write while the round's review is open (calendar.review_open); after it closes only the round's
    reviewers do, who decide until publication."""
    now = now or timezone.now()
    if who.reviews(objection.round) or calendar.review_open(objection.round.calendar, now):
        return None
    ends = objection.round.calendar.review_ends_at
    closed = f"closed on {calendar.when(ends)}" if ends and ends <= now else "is not open"
    return f"The review of {objection.round.name} {closed}: the parties write no more replies."


def reply_side(who: Viewer, objection) -> str:
    """Who a reply speaks for (submissions.ObjectionReply.Side): the organisation objected to, the
    objector, or a reviewer."""
    if objection.against_organisation_id in who.organisations:
        return "objected"
    if objection.from_organisation_id in who.organisations:
        return "objector"
    return "reviewer"


def decide_refusal(who: Viewer, objection) -> str | None:
    """Why `who` may not decide the objection, or None: a reviewer of its round who belongs to neither
    party decides."""
    if not who.reviews(objection.round):
        return "Only a reviewer of the round decides an objection."
    if _parties(objection) & who.organisations:
        return "A reviewer does not decide an objection that involves their own organisation."
    return None


def may_decide(who: Viewer, objection) -> bool:
    return decide_refusal(who, objection) is None


def may_withdraw(who: Viewer, submission) -> bool:
    """A member of the submission's organisation, or staff, withdraws it or its results (before the
    round is published: the submission's room says when it no longer can)."""
    return who.staff or (
        submission.organisation_id is not None and submission.organisation_id in who.organisations
    )


def may_publish(who: Viewer) -> bool:
    """Staff publish a round now (otherwise it publishes itself at its publication time)."""
    return who.staff


def may_import_round(who: Viewer) -> bool:
    """Staff bring a published round in from MLCommons' repository (the round's page; `manage.py import_round`
    is the operator's), and read how its last import went."""
    return who.staff


def may_manage_members(who: Viewer, organisation) -> bool:
    """Staff and the organisation's admins add, change and remove its members."""
    return who.staff or organisation.pk in who.administers


def may_manage_webhooks(who: Viewer, organisation) -> bool:
    """Staff and the organisation's admins set its webhooks and read their delivery log, as they
    manage its members."""
    return may_manage_members(who, organisation)


def webhook_filter(who: Viewer) -> Q:
    """A Q over notifications.Webhook: those `who` may read and remove (may_manage_webhooks)."""
    if who.staff:
        return Q()
    return Q(organisation_id__in=who.administers)


def may_join(who: Viewer) -> bool:
    """Whether `who` may be invited to an organisation and accept: never staff, nor a reviewer of any
    round (one who belonged to an organisation could no longer decide objections against it)."""
    return not who.anonymous and not who.staff and not who.reviewed_rounds


def may_request_check(who: Viewer) -> bool:
    """Staff ask for a result's reference check again; everyone reads the checks of what they see."""
    return who.staff


def may_revalidate(who: Viewer) -> bool:
    """Staff check a submission's bundle again (after a fix of the rules, or asked by its submitter)."""
    return who.staff


def may_see_agents(who: Viewer) -> bool:
    """The GPU agents and their host names are for staff."""
    return who.staff


# -- pages and API views ----------------------------------------------------------------------------


def page_for(rule):
    """A view decorator: the page opens to the users whom `rule` (a function of a Viewer, such as
    may_publish) allows; anyone else is sent to the admin's sign-in, as Django's staff_member_required
    sends them."""
    return user_passes_test(lambda user: rule(viewer(user)), login_url="admin:login")


def permission(rule) -> type[BasePermission]:
    """A DRF permission class: the request passes when `rule` (a function of a Viewer) allows its user.
    Compose it with DRF's operators: `[ReadOnly | permission(may_request_check)]`."""

    class Allowed(BasePermission):
        def has_permission(self, request, view):
            return rule(viewer(request.user))

    Allowed.__name__ = Allowed.__qualname__ = f"Allowed[{rule.__name__}]"
    return Allowed


class ReadOnly(BasePermission):
    """A GET, HEAD or OPTIONS: anyone reads, what the view's queryset lets them see."""

    def has_permission(self, request, view):
        return request.method in SAFE_METHODS


# -- hear (notifications/) ------------------------------------------------------------------------
#
# Who is told of an event: the candidates, as Qs over users (django.contrib.auth's User, through its
# memberships and reviewed rounds), then `may_hear` for each one: nobody hears of what they may not see
# (a notification, a mail or a webhook says no more than the pages would show its reader).


def _admins_of(*organisations) -> Q:
    return Q(
        memberships__organisation_id__in=[o for o in organisations if o], memberships__role=ADMIN
    )


def told_of_submission(submission) -> Q:
    """Its uploader and its organisation's admins (upload received, verdicts, publication, a
    disagreeing reference check)."""
    return Q(pk=submission.uploaded_by_id) | _admins_of(submission.organisation_id)


def told_of_objection(objection, *, reviewers: bool = True) -> Q:
    """The round's reviewers (when `reviewers`), the objector who filed it, and both parties' admins."""
    q = Q(pk=objection.filed_by_id) | _admins_of(
        objection.from_organisation_id, objection.against_organisation_id
    )
    return q | Q(reviewed_rounds=objection.round_id) if reviewers else q


def told_of_round(round_) -> Q:
    """The round's reviewers (its phases: review opens, closes, publication)."""
    return Q(reviewed_rounds=round_.pk)


def told_of_deadline(organisations) -> Q:
    """The admins and members of `organisations` (those of the round with no valid submission yet)."""
    return Q(memberships__organisation_id__in=list(organisations))


def may_hear(who: Viewer, *, submission=None, objection=None) -> bool:
    """Whether `who` may be told of an event about `submission` or `objection` (the same rules as
    seeing them); an event about a round alone (its phases, its deadline) is the round's calendar,
    which is public."""
    if who.anonymous:
        return False
    if objection is not None and not may_see_objection(who, objection):
        return False
    return submission is None or who.may_see(submission)


def organisation_may_hear(organisation_id: int, *, submission=None, objection=None) -> bool:
    """Whether an organisation's webhook may be told of an event: what any member of it sees of its own
    (its submissions, the objections it is party to), never the peer review's view of the others'."""
    if objection is not None and organisation_id not in _parties(objection):
        return False
    return submission is None or submission.organisation_id == organisation_id
