"""Reference checks in the database: planned, sent to the agents, stored, retried, failed with the reason.

An agent (agent/) consumes `gpu` and `gpu.<family queue>` and needs only the broker. The portal sends it the
task `agent.reference_check` by name with one JSON dict; the agent answers with the tasks
`submissions.store_reference_check` and `submissions.agent_heartbeat` on the queue "checks" (refchecks/tasks.py), which
call store() and heartbeat() here. Every change of state is a conditional UPDATE on the state (and the
attempt), so a late answer, a duplicate message or a second sweeper changes nothing twice.
"""

from __future__ import annotations

import logging
import math
import uuid
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F, Prefetch, Q
from django.utils import timezone
from django.utils.translation import gettext
from kombu.exceptions import OperationalError as BrokerError

from audit.log import record
from leaderboard.catalogue.accelerators import family_of, placement
from leaderboard.models import Division, Result, Run
from notifications.emit import emit
from submissions.checking.safejson import storable
from submissions.models import Agent, ReferenceCheck

from . import implied, verdict

log = logging.getLogger(__name__)
TASK = "agent.reference_check"
ANY_QUEUE = "gpu"
REPLY_QUEUE = "checks"
State, Verdict = ReferenceCheck.State, ReferenceCheck.Verdict
OPEN = [State.QUEUED, State.RUNNING]


def _audit(action: str, check: ReferenceCheck, actor=None, **details) -> None:
    result = check.result
    record(
        action, actor=actor, obj=check, round=result.system.round, result=str(result.uid), **details
    )


def _send(check: ReferenceCheck) -> None:
    """Hand the job to the broker; a broker that does not answer leaves it unsent (sent_at empty), and the
    sweeper sends it later."""
    try:
        current_app.send_task(TASK, args=[check.request], queue=check.queue)
    except (BrokerError, OSError) as error:
        log.warning(
            "the broker refused reference check %s (%s); the sweeper sends it", check.uid, error
        )
        return
    ReferenceCheck.objects.filter(pk=check.pk, attempts=check.attempts).update(
        sent_at=timezone.now()
    )


def batch_size(hyperparameters: dict, accelerators: int | None) -> int | None:
    """The per-accelerator batch: the logged global batch ÷ the accelerators (at least 1), else the logged
    local batch."""
    gbs = implied._finite(hyperparameters.get("global_batch_size"))
    if gbs and gbs > 0:
        return max(1, math.ceil(gbs / (accelerators or 1)))
    local = implied._finite(hyperparameters.get("local_batch_size"))
    return int(local) if local and local >= 1 else None


def _request(check: ReferenceCheck, benchmark: str, hp: dict, batch: int, rule, precision) -> dict:
    seq_len = implied._finite(hp.get("max_sequence_length"))
    return {
        "check": str(check.uid),
        "benchmark": benchmark,
        "batch_size": batch,
        "seq_len": int(seq_len) if seq_len and seq_len >= 1 else rule.seq_len,
        "precision": precision,
        "max_seconds": float(settings.REFCHECK_MAX_SECONDS),
        "reply_queue": REPLY_QUEUE,
    }


def _results():
    """Results with what planning reads: system, round, benchmark and runs (eval curves included)."""
    return Result.objects.select_related("system__round", "benchmark").prefetch_related(
        Prefetch("runs", Run.objects.defer("convergence").order_by("index"))
    )


def plan(result: Result, *, reason: str, user=None, any_agent: bool = False) -> ReferenceCheck:
    """A new check of the result. It is queued for the agents of the claimed accelerator's family (with
    `any_agent`, for any agent), or recorded at once as could-not-run with why: no probe for the benchmark,
    no agent for the accelerator, no throughput implied by the logs. `result` as _results() reads it, or
    any Result (read again)."""
    if "runs" not in getattr(result, "_prefetched_objects_cache", {}):
        result = _results().get(pk=result.pk)
    system, rule = result.system, verdict.rule(result.benchmark.key)
    where = placement(system.accelerator_model)
    runs = list(result.runs.all())
    figure = implied.implied_throughput(runs, system.accelerator_count, rule.dataset_samples)
    check = ReferenceCheck(
        result=result,
        family=where.family or "",
        any_agent=any_agent,
        reason=reason[:200],
        requested_by=user if getattr(user, "is_authenticated", False) else None,
        implied=figure.per_accelerator,
        implied_runs=[
            {
                "run": run.path,
                "samples": work.samples,
                "seconds": work.seconds,
                "per_accelerator": work.per_accelerator,
                "how": work.how,
            }
            for run, work in zip(implied.used_runs(runs), figure.runs)
        ],
        tolerance=rule.tolerance,
    )
    hp = next((r.hyperparameters for r in runs if r.hyperparameters), None) or {}
    batch = batch_size(hp, system.accelerator_count)
    why = ""
    if not rule.probe:
        why = f"no probe for this benchmark ({result.benchmark.key})"
    elif where.queue is None and not any_agent:
        why = where.reason
    elif figure.per_accelerator is None:
        why = f"the logs imply no throughput: {figure.reason}"
    elif batch is None:
        why = "the logs give no batch size"
    if why:
        check.state, check.verdict = State.DONE, Verdict.COULD_NOT_RUN
        check.message, check.finished_at = f"Could not run: {why}.", timezone.now()
        check.save()
        _audit("reference_check.could_not_run", check, user, why=why)
        return check
    check.queue = ANY_QUEUE if any_agent else f"{ANY_QUEUE}.{where.queue}"
    check.request = _request(check, result.benchmark.key, hp, batch, rule, where.precision)
    check.attempts = 1
    check.save()
    _audit("reference_check.queued", check, user, queue=check.queue, reason=reason)
    transaction.on_commit(lambda: _send(check))
    return check


def plan_for_submission(submission_id: int) -> list[ReferenceCheck]:
    """At finalize: a check for each closed-division result of a round that is not imported history, unless
    it has one already (a repeated finalize, a re-validation: the same logs need no second GPU run; staff
    can ask for one)."""
    results = (
        _results()
        .filter(
            system__submission_id=submission_id,
            system__division=Division.CLOSED,
            system__round__history=False,
        )
        .filter(reference_checks__isnull=True)
        .order_by("pk")
    )
    return [plan(result, reason="finalize") for result in results]


def _uid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None


def _text(value, limit: int) -> str:
    return "" if value is None else str(value)[:limit]


def _count(value) -> int:
    number = implied._finite(value)
    return int(number) if number is not None and 0 <= number < 2**31 else 0


def heartbeat(payload: dict) -> Agent | None:
    """An agent's announcement (at start, each beat and when it takes a job): stored as it says; a job it
    names as its current one is running on it."""
    if not isinstance(payload, dict) or not _text(payload.get("hostname"), 255).strip():
        return None
    accelerator = _text(payload.get("accelerator"), 200)
    queues = payload.get("queues")
    memory = implied._finite(payload.get("memory_bytes"))
    now = timezone.now()
    agent, created = Agent.objects.update_or_create(
        hostname=_text(payload["hostname"], 255),
        defaults=dict(
            queues=[_text(q, 100) for q in queues][:50] if isinstance(queues, list) else [],
            accelerator=accelerator,
            family=family_of(accelerator) or "",
            accelerator_count=_count(payload.get("accelerator_count")),
            memory_bytes=int(memory) if memory is not None and 0 <= memory < 2**63 else None,
            driver=_text(payload.get("driver"), 100),
            cuda=_text(payload.get("cuda"), 100),
            torch=_text(payload.get("torch"), 100),
            current_job=_text(payload.get("current_job") or "", 100),
            jobs_done=_count(payload.get("jobs_done")),
            jobs_failed=_count(payload.get("jobs_failed")),
            last_seen=now,
        ),
    )
    if created:
        record(
            "agent.appeared",
            obj=agent,
            accelerator=agent.accelerator,
            queues=agent.queues,
            torch=agent.torch,
        )
    job = _uid(agent.current_job)
    if job is not None:
        ReferenceCheck.objects.filter(uid=job, state=State.QUEUED).update(
            state=State.RUNNING, agent=agent, agent_name=agent.hostname, started_at=now
        )
    return agent


def store(payload: dict) -> str:
    """An agent's answer: a measurement, judged against the implied figure, or the error that stopped it.
    Returns what happened ("stored", "error", or "ignored" for an unknown, finished or malformed one)."""
    check_uid = _uid(payload.get("check")) if isinstance(payload, dict) else None
    check = (
        ReferenceCheck.objects.select_related("result__system__round").filter(uid=check_uid).first()
        if check_uid
        else None
    )
    if check is None or check.is_final:
        return "ignored"
    hostname = _text(payload.get("agent"), 255)
    agent = Agent.objects.filter(hostname=hostname).first() if hostname else None
    now = timezone.now()
    fields = dict(
        agent=agent or check.agent,
        agent_name=hostname or check.agent_name,
        started_at=check.started_at or now,
        finished_at=now,
        state=State.DONE,
    )
    measurement = payload.get("measurement")
    if payload.get("error") or not isinstance(measurement, dict):
        why = _text(payload.get("error") or "the agent sent no measurement", 2000)
        fields.update(verdict=Verdict.COULD_NOT_RUN, message=f"The agent could not run it: {why}")
        outcome = "error"
    else:
        measurement, _ = storable(measurement)
        measured = implied._finite(measurement.get(FIGURE))
        device = _text(measurement.get("device"), 200)
        measured_on = family_of(agent.accelerator if agent and agent.accelerator else device)
        judged = verdict.judge(
            check.implied or 0.0,
            measured or 0.0,
            check.tolerance or verdict.rule(check.request.get("benchmark", "")).tolerance,
            claimed_family=check.family,
            measured_on=measured_on,
            cpu=bool(measurement.get("cpu")),
            scaled_by_layers=_text(measurement.get("scaled_by_layers") or "", 200),
        )
        fields.update(
            measurement=measurement,
            measured=measured,
            ratio=judged.ratio,
            verdict=judged.verdict,
            message=judged.message,
        )
        outcome = "stored"
    if not ReferenceCheck.objects.filter(pk=check.pk, state__in=OPEN).update(**fields):
        return "ignored"  # another answer won
    check.refresh_from_db()
    _audit(f"reference_check.{outcome}", check, verdict=check.verdict, agent=hostname)
    if check.verdict == Verdict.IMPLAUSIBLY_FAST:
        emit("refcheck.disagrees", check=check.pk)
    return outcome


def send_to_any_agent(result: Result, user) -> ReferenceCheck:
    """Staff: measure the result on whatever agent takes it first (queue gpu). The measurement is labelled
    as other hardware unless that agent has the claimed family; a check still waiting for the family's
    agents stays open."""
    return plan(result, reason="sent to any agent by staff", user=user, any_agent=True)


def online_agents(now=None) -> list[Agent]:
    now = now or timezone.now()
    since = now - timedelta(seconds=settings.AGENT_OFFLINE_AFTER_S)
    return list(Agent.objects.filter(last_seen__gte=since))


def online_queues(now=None) -> set[str]:
    return {q for agent in online_agents(now) for q in agent.queues}


def _retry(check: ReferenceCheck, why: str, max_attempts: int) -> str:
    """Send a lost job again (to its queue: another agent takes it), or after max_attempts record it failed."""
    claim = ReferenceCheck.objects.filter(pk=check.pk, state=check.state, attempts=check.attempts)
    if check.attempts >= max_attempts:
        message = f"Failed after {check.attempts} attempts: {why}."
        if claim.update(
            state=State.FAILED,
            verdict=Verdict.COULD_NOT_RUN,
            message=message,
            finished_at=timezone.now(),
        ):
            check.refresh_from_db()
            _audit("reference_check.failed", check, why=why)
            return "failed"
        return ""
    if not claim.update(
        state=State.QUEUED,
        attempts=F("attempts") + 1,
        agent=None,
        started_at=None,
        sent_at=None,
        message=f"Attempt {check.attempts} was lost: {why}; sent again.",
    ):
        return ""
    check.refresh_from_db()
    _audit("reference_check.retried", check, why=why, attempt=check.attempts)
    _send(check)
    return "retry"


def sweep(now=None, max_attempts: int | None = None) -> list[tuple[int, str]]:
    """Checks that no agent will finish: sent again, or failed with the reason; never left open for good.
    1. never handed to the broker (it did not answer): sent;
    2. running on an agent not heard from for AGENT_OFFLINE_AFTER_S (it vanished): retried;
    3. running longer than REFCHECK_JOB_LIMIT_S: retried;
    4. queued for longer than the job limit while an agent of its queue is online and idle (the message
       was lost): retried.
    A job for a family with no agent online waits, as the pages say. Returns (submission id, action)."""
    now = now or timezone.now()
    max_attempts = max_attempts or settings.REFCHECK_MAX_ATTEMPTS
    limit = timedelta(seconds=settings.REFCHECK_JOB_LIMIT_S)
    offline_before = now - timedelta(seconds=settings.AGENT_OFFLINE_AFTER_S)
    checks = ReferenceCheck.objects.select_related("result__system", "agent")
    actions = []

    def act(check, action):
        if action:
            actions.append(
                (check.result.system.submission_id, f"{action} reference check {check.uid}")
            )

    for check in checks.filter(state=State.QUEUED, sent_at__isnull=True, attempts__gt=0):
        _send(check)
        act(check, "send")
    for check in checks.filter(state=State.RUNNING).filter(
        Q(agent__isnull=True) | Q(agent__last_seen__lt=offline_before)
    ):
        act(
            check,
            _retry(
                check, f"its agent {check.agent_name or '?'} vanished (no heartbeat)", max_attempts
            ),
        )
    for check in checks.filter(state=State.RUNNING, started_at__lt=now - limit):
        act(
            check,
            _retry(
                check,
                f"it ran past its limit of {settings.REFCHECK_JOB_LIMIT_S:g} s on "
                f"{check.agent_name or '?'}",
                max_attempts,
            ),
        )
    idle = {
        q
        for agent in Agent.objects.filter(last_seen__gte=offline_before, current_job="")
        for q in agent.queues
    }
    for check in checks.filter(state=State.QUEUED, sent_at__lt=now - limit, queue__in=idle):
        act(check, _retry(check, "an idle agent of its queue never took it", max_attempts))
    return actions


def state_label(check: ReferenceCheck, queues: set[str]) -> str:
    """The state in words, as the pages say it."""
    if check.state == State.QUEUED:
        if check.queue in queues:
            return gettext("queued")
        return (
            gettext("waiting for any agent")
            if check.queue == ANY_QUEUE
            else gettext("waiting for an agent with %(family)s") % {"family": check.family}
        )
    if check.state == State.RUNNING:
        if check.agent_name:
            return gettext("running on %(agent)s") % {"agent": check.agent_name}
        return gettext("running")
    return str(check.get_state_display()).lower()


FIGURE = "samples_per_second_per_accelerator"


def as_dict(check: ReferenceCheck, queues: set[str]) -> dict:
    """What pages and the API show of a check."""
    measurement = check.measurement or {}
    agent = check.agent
    return {
        "uid": str(check.uid),
        "state": check.state,
        "state_label": state_label(check, queues),
        "waiting": check.state == State.QUEUED and check.queue not in queues,
        "family": check.family,
        "queue": check.queue,
        "any_agent": check.any_agent,
        "attempts": check.attempts,
        "agent": check.agent_name,
        "measured_on": (agent.accelerator if agent else "") or measurement.get("device", ""),
        "measured": check.measured,
        "implied": check.implied,
        "implied_runs": check.implied_runs,
        "ratio": check.ratio,
        "tolerance": check.tolerance,
        "verdict": check.verdict,
        "verdict_label": str(check.get_verdict_display()) if check.verdict else "",
        "message": check.message,
        # Exactly what the probe ran (model, shapes, steps, dtype, device, versions, cpu, scaling...).
        "probe": {key: value for key, value in measurement.items() if key != FIGURE},
        "request": check.request,
        "reason": check.reason,
        "created_at": check.created_at,
        "finished_at": check.finished_at,
    }


def by_result(result_ids: list[int]) -> dict[int, list[dict]]:
    """The checks of each result, newest first: the provider of leaderboard.panels.reference_checks."""
    queues = online_queues()
    out: dict[int, list[dict]] = {}
    for check in (
        ReferenceCheck.objects.filter(result_id__in=result_ids)
        .select_related("agent")
        .order_by("-created_at", "-pk")
    ):
        out.setdefault(check.result_id, []).append(as_dict(check, queues))
    return out
