"""Staff pages of the reference checks: the agents page, and asking for a check of a result."""

from collections import Counter

from django.conf import settings
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from leaderboard.access import policy
from leaderboard.models import Result
from submissions.models import Agent, ReferenceCheck, Submission

from . import jobs


@require_safe
@policy.page_for(policy.may_see_agents)
def agents_page(request):
    now = timezone.now()
    queues = jobs.online_queues(now)
    online = {a.pk for a in jobs.online_agents(now)}
    agents = list(Agent.objects.all())
    running = {
        str(c.uid): c
        for c in ReferenceCheck.objects.filter(
            uid__in=[a.current_job for a in agents if jobs._uid(a.current_job)]
        ).select_related("result__system__submitter", "result__benchmark")
    }
    for agent in agents:
        agent.online = agent.pk in online
        agent.job = running.get(agent.current_job)
    waiting = Counter(
        jobs.state_label(c, queues)
        for c in ReferenceCheck.objects.filter(state=ReferenceCheck.State.QUEUED)
        if c.queue not in queues
    )
    return render(
        request,
        "refchecks/agents.html",
        {
            "agents": agents,
            "online": len(online),
            "offline_after": settings.AGENT_OFFLINE_AFTER_S,
            "waiting": sorted(waiting.items()),
        },
    )


@require_POST
@policy.page_for(policy.may_request_check)
def request_check(request, uid):
    """Staff: check a result of this submission again, on its family's agents or (`to=any`) on any agent."""
    submission = get_object_or_404(Submission, uid=uid)
    result_uid = jobs._uid(request.POST.get("result"))
    result = (
        Result.objects.filter(system__submission=submission, uid=result_uid)
        .select_related("benchmark", "system")
        .first()
        if result_uid
        else None
    )
    if result is None:
        messages.error(request, "No such result in this submission.")
        return redirect(submission)
    if request.POST.get("to") == "any":
        check = jobs.send_to_any_agent(result, request.user)
    else:
        check = jobs.plan(result, reason="requested by staff", user=request.user)
    messages.info(
        request,
        f"Reference check of {result.system.key} › {result.benchmark.key}: "
        f"{check.message or jobs.state_label(check, jobs.online_queues())}",
    )
    return redirect(submission)
