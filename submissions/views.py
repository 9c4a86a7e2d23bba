"""Submitters' pages: upload a bundle, watch its progress, read its outcome."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from leaderboard.access import policy
from leaderboard.models import Result, Round
from leaderboard.pages.common import attachment
from submissions.checking.pipeline import held_results
from submissions.checking.reports import findings_of, report_dict
from submissions.checking.rules.mlperf import divergences
from submissions.checking.status import STATE_WORDS, steps_of
from submissions.checking.tasks import revalidate as revalidate_task
from submissions.intake import receipts, round_import, uploads
from submissions.intake.forms import UploadForm
from submissions.intake.submit import UploadTooLarge, submit
from submissions.intake.tasks import import_round as import_round_task
from submissions.review.views import submission_section

from .models import Submission, Validation
from .visibility import visible_submissions

FINDINGS_SHOWN = 2000  # the page stays readable; the JSON download has every finding
# What a request may declare beyond UPLOAD_MAX_BYTES for the form around the file (boundaries, headers, the round).
FORM_ENVELOPE_BYTES = 64 * 1024


def _visible(user):
    return visible_submissions(user)


@csrf_exempt  # the CSRF check would read the whole body first: a declared size too large is refused before it
@login_required
def upload(request):
    limit = settings.UPLOAD_MAX_BYTES
    if request.method == "POST" and _declared_length(request) > limit + FORM_ENVELOPE_BYTES:
        return _too_large(
            request, UploadForm(user=request.user), UploadTooLarge(limit)
        )  # nothing of the body is read
    return _upload(request, limit)


@csrf_protect
def _upload(request, limit: int):
    form = UploadForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        bundle = form.cleaned_data["bundle"]
        round_, organisation = form.cleaned_data["round"], form.cleaned_data["organisation"]
        if refusal := uploads.calendar_refusal(round_, organisation, user=request.user):
            form.add_error("round", refusal)
            return render(request, "submissions/upload.html", {"form": form}, status=403)
        try:
            submission, created = submit(
                round_,
                bundle.chunks(),
                bundle.name,
                user=request.user,
                organisation=organisation,
                max_bytes=limit,
            )
        except (
            UploadTooLarge
        ) as error:  # the size is counted while the bundle is stored, whatever was declared
            return _too_large(request, form, error)
        if created:
            receipts.accepted(submission, request)
        receipt = request.build_absolute_uri(receipts.receipt_url(submission))
        messages.info(
            request,
            (
                gettext("Received. Its receipt: %(receipt)s")
                if created
                else gettext(
                    "Received before: these bytes are already this submission. Its receipt: %(receipt)s"
                )
            )
            % {"receipt": receipt},
        )
        return redirect(submission)
    return render(request, "submissions/upload.html", {"form": form})


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # Django then reads no body at all


def _too_large(request, form, error: UploadTooLarge):
    return render(
        request, "submissions/upload.html", {"form": form, "too_large": str(error)}, status=413
    )


@login_required
def submission_list(request):
    return render(request, "submissions/list.html", {"submissions": _visible(request.user)[:200]})


def _get_visible(request, uid):
    """The submission if this user may see it; else 404, as for one that does not exist: a 403 would tell
    anyone that the submission is there."""
    return get_object_or_404(visible_submissions(request.user), uid=uid)


@login_required
def detail(request, uid):
    submission = _get_visible(request, uid)
    results = (
        Result.objects.filter(system__submission=submission)
        .select_related("system__submitter", "system__round", "benchmark")
        .order_by("system__key", "benchmark__position")
    )
    validation = submission.validations.filter(status=Validation.Status.DONE).first()
    findings = findings_of(validation) if validation else []
    withdrawn = {r.pk for r in results if r.withdrawn}
    held = [h for h in held_results(submission) if h.result_id not in withdrawn]
    return render(
        request,
        "submissions/detail.html",
        {
            "submission": submission,
            "results": results,
            "validation": validation,
            "held": held,
            "publishable": len(results) - len(held) - len(withdrawn),
            "withdrawn": len(withdrawn),
            "findings": findings[:FINDINGS_SHOWN],
            "divergences": divergences.present(f.rule for f in findings),
            "findings_hidden": max(0, len(findings) - FINDINGS_SHOWN),
            "validations": submission.validations.all(),
            "review": submission_section(request.user, submission),
            "steps": steps_of(submission),
            # The page's script writes the steps' states in the page's language.
            "step_words": {code: str(word) for code, word in STATE_WORDS.items()},
        },
    )


@login_required
def receipt(request, uid):
    submission = _get_visible(request, uid)
    return render(request, "submissions/receipt.html", {"submission": submission})


@login_required
def findings_json(request, uid):
    submission = _get_visible(request, uid)
    response = JsonResponse(report_dict(submission), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = attachment(f"submission-{uid}-findings.json")
    return response


@require_POST
@policy.page_for(policy.may_revalidate)
def revalidate(request, uid):
    submission = get_object_or_404(Submission, uid=uid)
    if not submission.is_final or submission.status == Submission.Status.WITHDRAWN:
        messages.error(
            request,
            gettext(
                "Submission %(uid)s is %(status)s; only a valid, invalid, failed or published "
                "submission can be re-validated."
            )
            % {"uid": uid, "status": str(submission.get_status_display()).lower()},
        )
    elif not submission.bundle:
        messages.error(
            request,
            gettext("Submission %(uid)s's bundle was deleted: upload it again.") % {"uid": uid},
        )
    else:
        reason = request.POST.get("reason", "").strip()[:300] or "re-validation requested"
        revalidate_task.delay(submission.pk, reason, request.user.pk)
        messages.info(request, gettext("Re-validation queued."))
    return redirect(submission)


@login_required
def progress(request, uid):
    submission = _get_visible(request, uid)
    return JsonResponse(
        {
            "status": submission.status,
            "status_label": submission.get_status_display(),
            "steps": [step.as_dict() for step in steps_of(submission)],
            "runs_total": submission.runs_total,
            "runs_checked": submission.runs_checked,
            "final": submission.is_final,
            "message": submission.message,
        }
    )


@require_POST
@login_required
def import_round(request, round_key):
    """Staff start `manage.py import_round` for the round on a worker; the round's page shows its progress."""
    if not policy.may_import_round(policy.viewer(request.user)):
        raise PermissionDenied(gettext("Only staff import a round."))
    round_ = get_object_or_404(Round, key=round_key)
    if not round_.results_repository:
        messages.error(
            request,
            gettext("%(round)s names no results_repository in its round file.")
            % {"round": round_.name},
        )
        return redirect(round_.get_absolute_url())
    try:
        round_import.claim(round_, round_import.State.QUEUED, round_.results_repository)
    except round_import.AlreadyImporting as busy:
        messages.info(request, str(busy))
    else:
        transaction.on_commit(lambda: import_round_task.delay(round_.key))
        messages.success(
            request,
            gettext("%(round)s is queued for import from %(where)s.")
            % {"round": round_.name, "where": round_.results_repository},
        )
    return redirect(round_.get_absolute_url())
