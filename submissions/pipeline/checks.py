"""Checking one run in one validation: parse its log, apply the round's rules, store the outcome."""

import os
import socket

from celery.exceptions import SoftTimeLimitExceeded
from django.db import IntegrityError, connection, transaction
from django.db.models import F

from leaderboard.models import Run

from .. import rules
from ..models import Finding, RunCheck
from .common import Status, update, work_dir

RUN_FIELDS = (
    "path", "result_id", "result__benchmark__key", "result__benchmark__quality_target",
    "result__benchmark__higher_is_better", "result__system__key", "result__system__division",
    "result__system__submission_id", "result__system__round__ruleset",
    "result__system__round__require_init_stop_before_run_start", "result__system__round__history",
)


def _run_facts(run_id: int) -> tuple[dict, frozenset[str]]:
    """The run's fields, and the names a log may give its benchmark: the round's keys and their
    aliases (v0.6 'mask'). One query: a row per benchmark of the round."""
    rows = list(Run.objects.filter(pk=run_id).values(
        *RUN_FIELDS, "result__system__round__benchmarks__key", "result__system__round__benchmarks__aliases",
    ))
    names = set()
    for row in rows:
        names.update([row["result__system__round__benchmarks__key"], *row["result__system__round__benchmarks__aliases"]])
    return rows[0], frozenset(names)


def _outcome_fields(outcome) -> dict:
    summary = outcome.summary
    return {
        "checked": True,
        "success": summary.success,
        "failure_reason": summary.failure_reason[:500],
        "time_to_train_s": summary.time_to_train_s,
        "status": str(summary.status or "")[:50],
        "seed": "" if summary.seed is None else str(summary.seed)[:100],
        "hyperparameters": summary.hyperparameters,
        "eval_curve": [list(point) for point in summary.eval_curve],
        "eval_x": summary.eval_x,
        "submission_keys": summary.submission,
        "convergence": outcome.convergence,
    }


def check_run(run_id: int, validation_id: int) -> int | None:
    """Check one run; return the submission id if this check completed the validation."""
    run, benchmark_names = _run_facts(run_id)
    submission_id = run["result__system__submission_id"]
    ctx = rules.RunContext(
        ruleset=run["result__system__round__ruleset"],
        benchmark=run["result__benchmark__key"],
        benchmark_keys=benchmark_names,
        division=run["result__system__division"],
        quality_target=run["result__benchmark__quality_target"],
        higher_is_better=run["result__benchmark__higher_is_better"],
        require_init_stop_before_run_start=run["result__system__round__require_init_stop_before_run_start"],
    )
    fields, findings = {"checked": True, "success": False}, []
    try:
        outcome = rules.check_run(work_dir(submission_id) / run["path"], run["path"], ctx)
        fields, findings = _outcome_fields(outcome), outcome.findings
    except SoftTimeLimitExceeded:
        fields["failure_reason"] = "checking took longer than the time limit"
        findings = [rules.Finding("error", "run.timeout", "Checking this log took longer than the task's time limit.",
                                  "Look for very long lines or a log far larger than a training run writes.",
                                  run["path"])]
    except OSError as error:
        fields["failure_reason"] = f"the log could not be read: {error.strerror}"
        findings = [rules.Finding("error", "run.unreadable", f"The log could not be read: {error.strerror}.",
                                  "Re-upload the bundle.", run["path"])]
    return _store(run_id, validation_id, run, fields, findings)


def _claim_finalize(submission_id: int) -> int | None:
    """Whoever completes the last check claims finalize; the conditional UPDATE lets only one win."""
    claimed = update(
        submission_id, only_if={"status": Status.CHECKING, "runs_checked__gte": F("runs_total")},
        status=Status.FINALIZING,
    )
    return submission_id if claimed else None


def _store(run_id, validation_id, run, fields, findings) -> int | None:
    """Store the outcome and count the run, once; claim finalize in the same transaction."""
    advisory = run["result__system__round__history"]
    submission_id = run["result__system__submission_id"]
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                # Don't wait for the disk: a check lost in a database crash has no RunCheck
                # row, so the sweeper queues it again.
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL synchronous_commit TO OFF")
            # The unique row claims the run once; it records which process checked it.
            RunCheck.objects.create(
                validation_id=validation_id, run_id=run_id, worker=f"{socket.gethostname()}:{os.getpid()}"
            )
            Run.objects.filter(pk=run_id).update(**fields)
            Finding.objects.bulk_create([
                Finding(
                    validation_id=validation_id, result_id=run["result_id"], run_id=run_id,
                    system_key=run["result__system__key"], benchmark=run["result__benchmark__key"],
                    severity=f.severity, rule=f.rule, file=f.file or run["path"], line=f.line,
                    message=f.message, hint=f.hint, advisory=advisory,
                )
                for f in findings
            ])
            update(submission_id, runs_checked=F("runs_checked") + 1)
            return _claim_finalize(submission_id)
    except IntegrityError:  # a repeat delivery: another stored this run first
        return _claim_finalize(submission_id)
