"""Peer review's pages: a round's objections and audit log for its reviewers, an objection's thread,
the form that files one, and withdrawal. Thin around submissions/review/objections.py; what a user may not see
answers 404."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audit.models import AuditEvent
from leaderboard.access import policy
from leaderboard.models import Result, Round
from submissions.models import Submission

from . import objections as review
from . import withdrawals
from .models import Objection

AUDIT_SHOWN = 500  # the newest events of the round; the admin has them all, with filters


def _not_found(error):
    raise Http404(str(error))


@login_required
def index(request):
    """The rounds the user reviews (staff: every live round), and the objections that concern them."""
    who = policy.viewer(request.user)
    rounds = Round.objects.filter(policy.rounds_reviewed(who))
    objections = list(
        review.visible_objections(request.user)
        .filter(policy.objections_concerning(who))
        .order_by("-created_at")[:200]
    )
    return render(
        request,
        "submissions/review_index.html",
        {"rounds": rounds.order_by("-publish_at", "key"), "objections": objections},
    )


@login_required
def round_review(request, round_key):
    if "\x00" in round_key:  # PostgreSQL finds no NUL: no round has one
        raise Http404("No round review matches the given query.")
    round_ = get_object_or_404(Round, key=round_key)
    if not policy.viewer(request.user).reviews(round_):
        raise Http404("No round review matches the given query.")
    objections = list(review.visible_objections(request.user, round_).order_by("created_at"))
    events = list(AuditEvent.objects.filter(round_key=round_.key)[:AUDIT_SHOWN])
    return render(
        request,
        "submissions/review_round.html",
        {
            "round": round_,
            "objections": objections,
            "undecided": sum(o.status in review.UNDECIDED for o in objections),
            "events": events,
            "events_shown": AUDIT_SHOWN,
        },
    )


@login_required
def objection_page(request, uid):
    try:
        objection = review.get_visible(request.user, uid)
    except review.NotFound as error:
        _not_found(error)
    return render(request, "submissions/objection.html", _thread_context(request, objection))


def _thread_context(request, objection, **extra):
    open_ = objection.status in review.UNDECIDED
    return {
        "objection": objection,
        "replies": objection.replies.select_related("author"),
        "can_reply": open_,
        "can_decide": review.can_decide(request.user, objection),
        "decisions": Objection.Decision.choices,
        **extra,
    }


@require_POST
@login_required
def objection_reply(request, uid):
    try:
        objection = review.get_visible(request.user, uid)
        review.reply(request.user, objection, request.POST.get("text", ""))
    except review.NotFound as error:
        _not_found(error)
    except review.ReviewError as error:
        messages.error(request, str(error))
    return redirect("review:objection", uid=uid)


@require_POST
@login_required
def objection_decide(request, uid):
    try:
        objection = review.get_visible(request.user, uid)
        review.decide(
            request.user, objection, request.POST.get("decision", ""), request.POST.get("note", "")
        )
    except review.NotFound as error:
        _not_found(error)
    except review.NotAllowed as error:
        return HttpResponseForbidden(str(error), content_type="text/plain")
    except review.ReviewError as error:
        messages.error(request, str(error))
    return redirect("review:objection", uid=uid)


def _submission(uid) -> Submission:
    return get_object_or_404(Submission.objects.select_related("round", "organisation"), uid=uid)


@login_required
def new_objection(request, submission_uid):
    """The form that files an objection against a result or a system of another organisation's
    submission (GET with ?system=&benchmark= fills it in)."""
    submission = _submission(submission_uid)
    if not policy.may_object_to(policy.viewer(request.user), submission):
        raise Http404("No submission matches the given query.")
    values = {
        name: (request.POST if request.method == "POST" else request.GET).get(name, "")
        for name in ("system", "benchmark", "rule", "file", "lines", "comment")
    }
    error = ""
    if request.method == "POST":
        try:
            objection = review.file_objection(
                request.user,
                submission,
                system_key=values["system"],
                benchmark_key=values["benchmark"],
                rule=values["rule"],
                comment=values["comment"],
                file=values["file"],
                lines=values["lines"],
            )
        except review.NotFound as e:
            _not_found(e)
        except review.ReviewError as e:
            error = str(e)
        else:
            return redirect(objection)
    targets = (
        Result.objects.filter(system__submission=submission)
        .order_by("system__key", "benchmark__position")
        .values_list("system__key", "benchmark__key")
    )
    return render(
        request,
        "submissions/objection_new.html",
        {
            "submission": submission,
            "values": values,
            "error": error,
            "systems": sorted({s for s, _ in targets}),
            "benchmarks": sorted({b for _, b in targets}),
        },
        status=400 if error else 200,
    )


@require_POST
@login_required
def withdraw(request, submission_uid):
    """Withdraw the submission, or one of its results (system and benchmark posted)."""
    submission = _submission(submission_uid)
    system, benchmark = request.POST.get("system", ""), request.POST.get("benchmark", "")
    if request.POST.get("result"):  # the page's one field: "system/benchmark"
        system, _, benchmark = request.POST["result"].rpartition("/")
    reason = request.POST.get("reason", "")
    try:
        if system or benchmark:
            withdrawals.withdraw_result(request.user, submission, system, benchmark, reason)
            messages.info(request, f"Result {system}/{benchmark} withdrawn.")
        else:
            withdrawals.withdraw_submission(request.user, submission, reason)
            messages.info(request, "Submission withdrawn.")
    except review.NotFound as error:
        _not_found(error)
    except review.ReviewError as error:
        messages.error(request, str(error))
    return redirect(submission)


def submission_section(user, submission) -> dict:
    """What the submission page shows of review: the objections against it that the user may read,
    whether they may object to it or withdraw it, and its withdrawn results."""
    objections = list(
        review.visible_objections(user).filter(submission=submission).order_by("created_at")
    )
    who = policy.viewer(user)
    return {
        "objections": objections,
        "can_object": policy.may_object_to(who, submission),
        "can_withdraw": withdrawals.may_withdraw(user, submission),
    }
