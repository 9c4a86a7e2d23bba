"""The events the portal tells people of, in one list, and `emit`, the write side's one call.

Each Event has a kind (its name in code, in preferences and in the API), a label for the preferences
page, the channels it goes by unless its user chose otherwise, and `tell`: from the ids the write side
gave `emit`, what happened (a Told: title, text, link) and who may be told (a Q over users from
leaderboard/access/policy.py, then policy.may_hear for each of them, so that nobody hears of what they may
not see). `tell` answers None when there is nothing to tell (the record is gone, a reference check that
agrees).

    kind                     who is told (policy.py)                          emitted by
    upload.received          the uploader, the organisation's admins          intake/submit.py
    validation.finished      the same: valid, or invalid with the errors      checking/pipeline/finalize.py
    revalidation.finished    the same, for a pass after the first             checking/pipeline/finalize.py
    objection.filed          the round's reviewers, both parties' admins      review/objections.py
    objection.replied        the same and the objector, not the author        review/objections.py
    objection.decided        the parties' admins, the objector                review/objections.py
    results.published        the uploader, the organisation's admins          checking/pipeline/publication.py
    deadline.24h, deadline.1h  members of the round's organisations with no   tasks.remind (beat)
                             valid submission yet
    refcheck.disagrees       the round's reviewers, the uploader and admins    refchecks/jobs.py
    round.review_opens, round.review_closes, round.published
                             the round's reviewers                             tasks.remind (beat), publication.py

Publication is told no earlier than the round's publish_at (Told.not_before), the minute its results go
public on the pages (leaderboard.access.public): an event that comes before it stays in the Outbox, and the
clock's sweep delivers it once the minute has come.

`notifications.emit.emit(kind, **ids)` is the write side's one call (emit.py): it records the event in
the write's transaction and queues its delivery once that commits. The event's key is its kind and ids:
a Notification per (key, recipient) is unique, so a retried task or a redelivered message tells nobody
twice.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.apps import apps
from django.db.models import Q
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from leaderboard.access import policy
from leaderboard.models import Round
from leaderboard.statuses import ReferenceCheckVerdict, SubmissionStatus

from .models import Channel


@dataclass(frozen=True)
class Told:
    """What an event says, to whom it may go, and what the policy checks for each recipient."""

    title: str
    text: str
    url: str
    audience: Q  # over users: the candidates
    submission: object = None  # policy.may_hear(who, submission=..., objection=...)
    objection: object = None
    not_to: int | None = None  # the user who did it (an author is not told of their own reply)
    parties: tuple = ()  # the organisations whose webhooks hear of it (policy.organisation_may_hear decides)
    about: str = ""  # the public uid of the submission or objection, for a webhook's payload
    not_before: object = None  # a datetime: the embargo's minute (publication), told no earlier


@dataclass(frozen=True)
class Event:
    kind: str
    label: str
    default: str  # a Channel
    tell: Callable[[dict], Told | None]


def _model(name: str):
    app, _, model = name.partition(".")
    return apps.get_model(app, model)


def _get(name: str, pk, related=()):
    return _model(name).objects.select_related(*related).filter(pk=pk).first()


def _submission(ids):
    return _get("submissions.Submission", ids.get("submission"), ("round", "organisation"))


def _upload_received(ids):
    s = _submission(ids)
    if s is None:
        return None
    said = {"bundle": s.original_name, "round": s.round.name, "size": s.size}
    return Told(
        gettext("Upload received: %(bundle)s for %(round)s") % said,
        gettext(
            "The portal received %(bundle)s (%(size)s bytes) for %(round)s and will check it now. "
            "You will be told its verdict."
        )
        % said,
        s.get_absolute_url(),
        policy.told_of_submission(s),
        submission=s,
        parties=(s.organisation_id,),
        about=str(s.uid),
    )


def _verdict(ids):
    s = _submission(ids)
    v = _get("submissions.Validation", ids.get("validation"))
    if s is None or v is None:
        return None
    said = {
        "bundle": s.original_name,
        "round": s.round.name,
        "errors": v.errors,
        "warnings": v.warnings,
    }
    again = v.number > 1
    if v.verdict == SubmissionStatus.VALID:
        title = gettext("Valid: %(bundle)s for %(round)s") % said
        if again:
            text = gettext(
                "The portal checked %(bundle)s again: it is valid (%(warnings)s warnings)."
            )
        else:
            text = gettext("The portal checked %(bundle)s: it is valid (%(warnings)s warnings).")
    else:
        title = gettext("Invalid, %(errors)s errors: %(bundle)s for %(round)s") % said
        if again:
            text = gettext(
                "The portal checked %(bundle)s again: %(errors)s errors and %(warnings)s warnings. "
                "The findings name the file, line, rule and what to do."
            )
        else:
            text = gettext(
                "The portal checked %(bundle)s: %(errors)s errors and %(warnings)s warnings. "
                "The findings name the file, line, rule and what to do."
            )
    text %= said
    return Told(
        title,
        text,
        s.get_absolute_url(),
        policy.told_of_submission(s),
        submission=s,
        parties=(s.organisation_id,),
        about=str(s.uid),
    )


def _objection(ids):
    return _get(
        "submissions.Objection",
        ids.get("objection"),
        ("round", "from_organisation", "against_organisation", "submission"),
    )


def _objection_filed(ids):
    o = _objection(ids)
    if o is None:
        return None
    said = {
        "from": o.from_organisation,
        "target": o.target_label,
        "round": o.round.name,
        "rule": o.rule,
    }
    return Told(
        gettext("Objection by %(from)s against %(target)s") % said,
        gettext("%(from)s objects to %(target)s in %(round)s: %(rule)s.") % said
        + f"\n\n{o.comment}",
        o.get_absolute_url(),
        policy.told_of_objection(o),
        objection=o,
        parties=(o.from_organisation_id, o.against_organisation_id),
        about=str(o.uid),
        not_to=o.filed_by_id,
    )


def _objection_replied(ids):
    r = _get("submissions.ObjectionReply", ids.get("reply"))
    o = r and _objection({"objection": r.objection_id})
    if o is None:
        return None
    said = {"side": r.get_side_display(), "from": o.from_organisation, "target": o.target_label}
    return Told(
        gettext("Reply on the objection against %(target)s") % said,
        gettext("A reply (%(side)s) on %(from)s's objection against %(target)s:") % said
        + f"\n\n{r.text}",
        o.get_absolute_url(),
        policy.told_of_objection(o),
        objection=o,
        parties=(o.from_organisation_id, o.against_organisation_id),
        about=str(o.uid),
        not_to=r.author_id,
    )


def _objection_decided(ids):
    o = _objection(ids)
    if o is None or not o.decision:
        return None
    note = f"\n\n{o.decision_note}" if o.decision_note else ""
    said = {
        "decision": o.get_decision_display(),
        "from": o.from_organisation,
        "target": o.target_label,
    }
    return Told(
        gettext("Decided: %(decision)s, objection against %(target)s") % said,
        gettext("The reviewers decided %(from)s's objection against %(target)s: %(decision)s.")
        % said
        + note,
        o.get_absolute_url(),
        policy.told_of_objection(o, reviewers=False),
        objection=o,
        parties=(o.from_organisation_id, o.against_organisation_id),
        about=str(o.uid),
        not_to=o.decided_by_id,
    )


def _published(ids):
    s = _submission(ids)
    if s is None:
        return None
    said = {"round": s.round.name, "bundle": s.original_name}
    return Told(
        gettext("Published: your results in %(round)s") % said,
        gettext("%(round)s is published: the results of %(bundle)s are public.") % said,
        s.round.get_absolute_url(),
        policy.told_of_submission(s),
        submission=s,
        parties=(s.organisation_id,),
        about=str(s.uid),
        not_before=s.round.publish_at,
    )


def _deadline(hours):
    def tell(ids):
        round_ = Round.objects.filter(pk=ids.get("round")).first()
        if round_ is None:
            return None
        said = {"hours": hours, "round": round_.name}
        return Told(
            gettext("%(hours)s h to the deadline of %(round)s, and no valid submission yet") % said,
            ngettext(
                "Uploads to %(round)s close in about %(hours)s hour and your organisation has no "
                "valid submission yet.",
                "Uploads to %(round)s close in about %(hours)s hours and your organisation has no "
                "valid submission yet.",
                hours,
            )
            % said,
            round_.get_absolute_url(),
            policy.told_of_deadline([ids.get("organisation")]),
            parties=(ids.get("organisation"),),
        )

    return tell


def _refcheck(ids):
    check = _get(
        "submissions.ReferenceCheck", ids.get("check"), ("result__system__submission__round",)
    )
    if check is None or check.verdict != ReferenceCheckVerdict.IMPLAUSIBLY_FAST:
        return None  # a check that agrees, or one that could not run, tells nobody
    result, s = check.result, check.result.system.submission
    said = {"result": result, "message": check.message}
    return Told(
        gettext("A reference check disagrees: %(result)s") % said,
        gettext("The reference check of %(result)s measured less than its logs imply: %(message)s")
        % said,
        s.get_absolute_url(),
        policy.told_of_submission(s) | policy.told_of_round(s.round),
        submission=s,
        parties=(s.organisation_id,),
        about=str(s.uid),
    )


def _phase(what, published=False):
    def tell(ids):
        round_ = Round.objects.filter(pk=ids.get("round")).first()
        if round_ is None:
            return None
        said = {"round": round_.name, "what": what}
        return Told(
            gettext("%(round)s: %(what)s") % said,
            gettext("%(round)s: %(what)s.") % said,
            round_.get_absolute_url(),
            policy.told_of_round(round_),
            not_before=round_.publish_at if published else None,
        )

    return tell


EVENTS = {
    e.kind: e
    for e in (
        Event("upload.received", _("An upload is received"), Channel.SITE, _upload_received),
        Event("validation.finished", _("A validation finishes"), Channel.BOTH, _verdict),
        Event("revalidation.finished", _("A re-validation finishes"), Channel.BOTH, _verdict),
        Event("objection.filed", _("An objection is filed"), Channel.BOTH, _objection_filed),
        Event("objection.replied", _("A reply to an objection"), Channel.BOTH, _objection_replied),
        Event("objection.decided", _("An objection is decided"), Channel.BOTH, _objection_decided),
        Event("results.published", _("Your results are published"), Channel.BOTH, _published),
        Event("deadline.24h", _("24 hours to a deadline"), Channel.BOTH, _deadline(24)),
        Event("deadline.1h", _("1 hour to a deadline"), Channel.BOTH, _deadline(1)),
        Event("refcheck.disagrees", _("A reference check disagrees"), Channel.BOTH, _refcheck),
        Event(
            "round.review_opens",
            _("A round's review opens"),
            Channel.SITE,
            _phase(_("review opens")),
        ),
        Event(
            "round.review_closes",
            _("A round's review closes"),
            Channel.SITE,
            _phase(_("review closes")),
        ),
        Event(
            "round.published",
            _("A round is published"),
            Channel.SITE,
            _phase(_("published"), published=True),
        ),
    )
}


def key_of(kind: str, ids: dict) -> str:
    """The event's key: its kind and ids, e.g. "validation.finished:submission=3:validation=7"."""
    return ":".join([kind, *(f"{name}={ids[name]}" for name in sorted(ids))])
