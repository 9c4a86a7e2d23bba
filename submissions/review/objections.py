"""Peer review of a round: objections filed, answered and decided, and what a decision does (its
effect on the results is publication's: checking/pipeline/publication.py; who may, policy's:
leaderboard/access/policy.py; withdrawal, withdrawals.py's). Pages
(submissions/review/views.py) and the API (submissions/review/api.py) are thin around these
functions; each change of state is written to the audit log.

During a round's review (leaderboard/catalogue/calendar.py) the members of every organisation that submitted
to the round may file an objection against another organisation's result or system. The objection's
parties (both organisations), the round's reviewers and staff read its thread; the organisation
objected to answers, the objector and reviewers reply. A reviewer who belongs to neither party
decides:

    accepted        the result stands as submitted
    fix required    the organisation may upload a fix during review (fix_requested); the upload
                    answers the objection (record_fix), and a reviewer then decides again
    waived          the rule is waived for this result
    moved to open   the system's division becomes open
    withdrawn       the result (or every result of the system) is withdrawn
"""

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from audit.log import record
from leaderboard.access import policy
from leaderboard.cache import invalidate_round
from leaderboard.catalogue import calendar
from leaderboard.models import Result, Round, System
from notifications.emit import emit
from submissions.checking.pipeline.publication import apply_decision
from submissions.models import Submission

from .models import Objection, ObjectionReply

Decision = Objection.Decision
Side = ObjectionReply.Side
# Objections still waiting for a decision (a fix required waits for the fix, then for a decision again).
UNDECIDED = (
    Objection.Status.OPEN,
    Objection.Status.ANSWERED,
    Objection.Status.FIX_REQUIRED,
    Objection.Status.FIXED,
)


class ReviewError(Exception):
    """An action refused: str(error) tells the user why, in words a page or the API shows as they are."""


class NotFound(ReviewError):
    """What the user may not see, answered as if it did not exist (404, never 403)."""


class NotAllowed(ReviewError):
    """The user sees the object but may not do this to it (403)."""


# -- who may: leaderboard/access/policy.py; what an objection's state allows: here ------------------------


def visible_objections(user, round_: Round | None = None):
    """The objections a user may read (policy.objection_filter), with what their pages show."""
    objections = Objection.objects.select_related(
        "round",
        "submission",
        "system",
        "result__benchmark",
        "from_organisation",
        "against_organisation",
    )
    if round_ is not None:
        objections = objections.filter(round=round_)
    return objections.filter(policy.objection_filter(policy.viewer(user)))


def get_visible(user, uid) -> Objection:
    objection = visible_objections(user).filter(uid=uid).first()
    if objection is None:
        raise NotFound(gettext("No objection matches the given query."))
    return objection


def can_decide(user, objection: Objection) -> bool:
    """Whether the page offers the user a decision: one they may make, on an objection still open to it."""
    return (
        objection.status in UNDECIDED
        and policy.may_decide(policy.viewer(user), objection)
        and objection.round.phase(timezone.now()) != calendar.PUBLISHED
    )


# -- objections ------------------------------------------------------------------------------------


def _reply(objection, author, side, text) -> ObjectionReply:
    return ObjectionReply.objects.create(objection=objection, author=author, side=side, text=text)


# The longest text a user writes in a thread: an objection's comment, a reply, a decision's note, a
# withdrawal's reason (a long page of text; 9 MiB were once taken). Shorter fields keep their columns'.
TEXT_MAX_CHARS = 20_000
FIELD_MAX_CHARS = {
    "rule": Objection._meta.get_field("rule").max_length,
    "file": Objection._meta.get_field("file").max_length,
    "lines": Objection._meta.get_field("lines").max_length,
    "system": 200,
    "benchmark": 50,
    "decision": 20,
}
# What `plain` and `_required` call each field in their messages.
FIELD_NAMES = {
    "rule": _("rule"),
    "file": _("file"),
    "lines": _("lines"),
    "system": _("system"),
    "benchmark": _("benchmark"),
    "decision": _("decision"),
    "comment": _("comment"),
    "reply": _("reply"),
    "note": _("note"),
    "reason": _("reason"),
}


def plain(**texts: str) -> None:
    """Text from a form or the API, by what it is: PostgreSQL stores no NUL character (nor finds one),
    and a column holds so much, so either is refused with the reason rather than ending as a 500."""
    for name, text in texts.items():
        text = text or ""
        if "\x00" in text:
            raise ReviewError(
                gettext("The %(field)s holds a NUL character (\\x00); remove it.")
                % {"field": FIELD_NAMES.get(name, name)}
            )
        limit = FIELD_MAX_CHARS.get(name, TEXT_MAX_CHARS)
        if len(text) > limit:
            raise ReviewError(
                gettext("The %(field)s is %(length)s characters long; at most %(limit)s are taken.")
                % {
                    "field": FIELD_NAMES.get(name, name),
                    "length": f"{len(text):,}",
                    "limit": f"{limit:,}",
                }
            )


def _required(**fields) -> dict:
    missing = [name for name, value in fields.items() if not (value or "").strip()]
    if missing:
        raise ReviewError(
            gettext("Say %(fields)s: an objection needs them.")
            % {"fields": gettext(" and ").join(str(FIELD_NAMES.get(m, m)) for m in missing)}
        )
    return {name: value.strip() for name, value in fields.items()}


@transaction.atomic
def file_objection(
    user,
    submission: Submission,
    *,
    system_key: str,
    benchmark_key: str = "",
    rule: str,
    comment: str,
    file: str = "",
    lines: str = "",
    organisation_id: int | None = None,
    now=None,
) -> Objection:
    """A member of a submitting organisation objects to another organisation's result (system and
    benchmark) or system (no benchmark), during the round's review."""
    now = now or timezone.now()
    plain(
        system=system_key,
        benchmark=benchmark_key,
        rule=rule,
        comment=comment,
        file=file,
        lines=lines,
    )
    round_ = submission.round
    objecting = _objecting_organisation(user, submission, organisation_id, now)
    system, result = _objected_to(submission, system_key, benchmark_key)
    text = _required(rule=rule, comment=comment)
    objection = Objection.objects.create(
        round=round_,
        submission=submission,
        system=system,
        result=result,
        from_organisation_id=objecting,
        against_organisation_id=submission.organisation_id,
        filed_by=user,
        rule=text["rule"][:200],
        file=file.strip()[:500],
        lines=lines.strip()[:50],
        comment=text["comment"],
    )
    record(
        "objection.filed",
        actor=user,
        obj=objection,
        round=round_,
        organisation=objection.against_organisation,
        by=objection.from_organisation.name,
        target=objection.target_label,
        submission=str(submission.uid),
        rule=objection.rule,
    )
    emit("objection.filed", objection=objection.pk)
    return objection


def _objecting_organisation(user, submission: Submission, organisation_id, now) -> int:
    """The id of the organisation the user objects for, while the round's review takes objections
    and the submission is there to object to."""
    round_ = submission.round
    mine = policy.objecting_organisations(policy.viewer(user, now), round_)
    # Only the round's submitters read each other's submissions, and only during review: to anyone
    # else the submission is not there.
    if not mine or round_.phase(now) != calendar.REVIEW:
        raise NotFound(gettext("No submission matches the given query."))
    if not calendar.review_open(round_.calendar, now):
        raise ReviewError(
            gettext("The review of %(round)s ended on %(when)s; objections are no longer taken.")
            % {"round": round_.name, "when": calendar.when(round_.review_ends_at)}
        )
    if submission.organisation_id is None or submission.status in (
        Submission.Status.WITHDRAWN,
        Submission.Status.FAILED,
    ):
        raise ReviewError(
            gettext("This submission is withdrawn or failed: there is nothing to object to.")
        )
    mine, refusal = policy.objecting_for(mine, submission, organisation_id)
    if refusal:
        raise NotAllowed(refusal)
    if len(mine) > 1:
        raise ReviewError(
            gettext("You belong to several submitting organisations: say for which one.")
        )
    return mine.pop()


def _objected_to(submission: Submission, system_key: str, benchmark_key: str):
    """The system, and the result when a benchmark is named, that an objection is against."""
    system = System.objects.filter(submission=submission, key=system_key).first()
    if system is None:
        raise ReviewError(
            gettext("The submission has no system %(system)s.") % {"system": repr(system_key)}
        )
    result = None
    if benchmark_key:
        result = Result.objects.filter(system=system, benchmark__key=benchmark_key).first()
        if result is None:
            raise ReviewError(
                gettext("System %(system)s has no result for %(benchmark)s.")
                % {"system": repr(system_key), "benchmark": repr(benchmark_key)}
            )
    return system, result


@transaction.atomic
def reply(user, objection: Objection, text: str) -> ObjectionReply:
    """The organisation objected to answers; the objector and reviewers reply. Until decided."""
    who = policy.viewer(user)
    if not policy.may_reply(who, objection):
        raise NotFound(gettext("No objection matches the given query."))
    plain(reply=text)
    if objection.status not in UNDECIDED:
        raise ReviewError(gettext("This objection is decided: its thread is closed."))
    if objection.round.phase(timezone.now()) == calendar.PUBLISHED:
        raise ReviewError(gettext("The round is published: its objections are closed."))
    if refusal := policy.reply_refusal(who, objection):
        raise NotAllowed(refusal)
    text = (text or "").strip()
    if not text:
        raise ReviewError(gettext("Write a reply first."))
    side = Side(policy.reply_side(who, objection))
    message = _reply(objection, user, side, text)
    if side == Side.OBJECTED and objection.status == Objection.Status.OPEN:
        objection.status = Objection.Status.ANSWERED
        objection.save(update_fields=["status", "updated_at"])
    record(
        "objection.replied",
        actor=user,
        obj=objection,
        round=objection.round,
        organisation=objection.against_organisation,
        side=side,
    )
    emit("objection.replied", reply=message.pk)
    return message


@transaction.atomic
def decide(user, objection: Objection, decision: str, note: str = "") -> Objection:
    """A reviewer decides, and the decision takes effect (see the module's docstring)."""
    who = policy.viewer(user)
    if not policy.may_see_objection(who, objection):
        raise NotFound(gettext("No objection matches the given query."))
    plain(decision=decision, note=note)
    if refusal := policy.decide_refusal(who, objection):
        raise NotAllowed(refusal)
    if decision not in Decision.values:
        raise ReviewError(
            gettext("Decide one of: %(decisions)s.") % {"decisions": ", ".join(Decision.values)}
        )
    objection = Objection.objects.select_for_update().get(pk=objection.pk)
    round_ = objection.round
    if objection.status not in UNDECIDED:
        raise ReviewError(
            gettext("This objection is already decided: %(decision)s.")
            % {"decision": objection.get_decision_display()}
        )
    if round_.phase(timezone.now()) == calendar.PUBLISHED:
        raise ReviewError(
            gettext("The round is published: its results are no longer changed by review.")
        )
    changed = apply_decision(objection, decision)
    objection.decision = decision
    objection.decision_note = (note or "").strip()
    objection.decided_by = user
    objection.decided_at = timezone.now()
    objection.status = (
        Objection.Status.FIX_REQUIRED
        if decision == Decision.FIX_REQUIRED
        else Objection.Status.DECIDED
    )
    objection.save()
    with translation.override(
        settings.LANGUAGE_CODE
    ):  # a reply is kept in English, as findings are
        label = str(Decision(decision).label)
    _reply(
        objection,
        user,
        Side.REVIEWER,
        f"Decision: {label}." + (f" {objection.decision_note}" if objection.decision_note else ""),
    )
    record(
        "objection.decided",
        actor=user,
        obj=objection,
        round=round_,
        organisation=objection.against_organisation,
        decision=decision,
        note=objection.decision_note,
        changed=changed,
    )
    emit("objection.decided", objection=objection.pk)
    if changed:
        transaction.on_commit(lambda: invalidate_round(round_.key))
    return objection


def fix_requested(organisation, round_: Round) -> bool:
    """Whether a reviewer asked the organisation for a fix in the round that it has not yet uploaded:
    intake then takes its upload during review."""
    if organisation is None:
        return False
    return Objection.objects.filter(
        round=round_, against_organisation=organisation, status=Objection.Status.FIX_REQUIRED
    ).exists()


@transaction.atomic
def record_fix(submission: Submission) -> list[Objection]:
    """A new upload of an organisation asked for a fix answers its objections waiting for one: each
    says so in its thread and waits for a reviewer's decision again."""
    if submission.organisation_id is None:
        return []
    waiting = list(
        Objection.objects.select_for_update().filter(
            round_id=submission.round_id,
            against_organisation_id=submission.organisation_id,
            status=Objection.Status.FIX_REQUIRED,
        )
    )
    for objection in waiting:
        objection.status = Objection.Status.FIXED
        objection.fix = submission
        objection.save(update_fields=["status", "fix", "updated_at"])
        _reply(
            objection,
            submission.uploaded_by,
            Side.PORTAL,
            f"Fix uploaded: submission {submission.uid} ({submission.original_name}).",
        )
        record(
            "objection.fixed",
            actor=submission.uploaded_by,
            obj=objection,
            round=submission.round,
            organisation=objection.against_organisation,
            fix=str(submission.uid),
        )
    return waiting


def answer_with_fix(sender, instance: Submission, created: bool, **kwargs) -> None:
    """post_save of a Submission (connected in SubmissionsConfig.ready): a new upload of an
    organisation waiting for a fix answers its objections, whichever way it came in (page, API)."""
    if created and instance.organisation_id is not None:
        record_fix(instance)
