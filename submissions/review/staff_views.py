"""Staff pages for running a round: each round's calendar and phase, and publishing one now. (A round's
objections and audit log are its review page's: review_views.)"""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from leaderboard.access import policy
from leaderboard.models import Round
from submissions.checking.pipeline import publish_round
from submissions.checking.pipeline.publication import NotPublishable


@policy.page_for(policy.may_publish)
def rounds(request):
    now = timezone.now()
    listed = [(r, r.phase(now)) for r in Round.objects.order_by("-publish_at", "key")]
    return render(request, "submissions/rounds.html", {"rounds": listed, "now": now})


@require_POST
@policy.page_for(policy.may_publish)
def publish_now(request, round_key):
    round_ = get_object_or_404(Round, key=round_key)
    try:
        count = publish_round(round_, actor=request.user)
    except NotPublishable as refusal:
        messages.error(request, str(refusal))
        return redirect("submissions:rounds")
    if count is None:
        messages.info(request, f"{round_.name} was published already; nothing changed.")
    else:
        messages.success(request, f"{round_.name} is published: {count} results are public.")
    return redirect("submissions:rounds")
