"""Checking runs in one validation: parse each log, apply the round's rules, store the outcomes.

A batch of runs (a task) is read with one query and stored in one transaction; each run is still
claimed once, by its unique RunCheck row, and a repeat delivery stores nothing twice.
"""

import logging
import math
import os
import socket

from celery.exceptions import SoftTimeLimitExceeded
from django.db import IntegrityError, transaction
from django.db.models import F

from leaderboard.models import Benchmark, Run
from submissions.models import Finding, RunCheck

from .. import rules
from ..budget import OverBudget, is_stop, within
from ..logs.power import kind_of, read_power_log
from ..rules import power as power_rules
from ..rules import run as run_rules
from ..safejson import describe, storable
from .common import Status, check_budget, submission_files, update
from .update_rows import update_rows

log = logging.getLogger(__name__)
RUN_FIELDS = (
    "pk",
    "path",
    "result_id",
    "result__benchmark__key",
    "result__benchmark__quality_target",
    "result__benchmark__higher_is_better",
    "result__system__key",
    "result__system__division",
    "result__system__submission_id",
    "result__system__round_id",
    "result__system__round__ruleset",
    "result__system__round__require_init_stop_before_run_start",
    "result__system__round__history",
    "result__power_result",
    "result__system__nodes",
    "power_files",
)


def _run_facts(run_ids: list[int]) -> dict[int, tuple[dict, frozenset[str]]]:
    """{run id: (its fields, the names a log may give its benchmark)}: the round's keys and their aliases
    (v0.6 'mask'). Two queries: the runs, then their rounds' benchmarks. Neither is ordered: the runs' default
    ordering goes on through their results' and systems' (to the submitter's name, the round's date), which
    joined seven tables instead of five."""
    runs = list(Run.objects.filter(pk__in=run_ids).order_by().values(*RUN_FIELDS))
    names: dict[int, set[str]] = {}
    rounds = {run["result__system__round_id"] for run in runs}
    benchmarks = Benchmark.objects.filter(round_id__in=rounds).order_by()
    for round_id, key, aliases in benchmarks.values_list("round_id", "key", "aliases"):
        names.setdefault(round_id, set()).update([key, *aliases])
    by_round = {round_id: frozenset(keys) for round_id, keys in names.items()}
    return {
        run["pk"]: (run, by_round.get(run["result__system__round_id"], frozenset())) for run in runs
    }


def _outcome_fields(outcome) -> tuple[dict, list]:
    """(the Run's fields, findings about values stored otherwise than logged). Every JSON field is stored as
    safejson.storable makes it: no NaN or Infinity (PostgreSQL's jsonb refuses them, and a JSON response would
    carry them), nothing nested past its depth; a time to train that is not finite is none."""
    summary = outcome.summary
    hyperparameters, changed = storable(summary.hyperparameters)
    time_to_train = summary.time_to_train_s
    fields = {
        "checked": True,
        "success": summary.success,
        "failure_reason": summary.failure_reason[:500],
        "time_to_train_s": time_to_train
        if time_to_train is None or math.isfinite(time_to_train)
        else None,
        "status": str(summary.status or "")[:50],
        "seed": "" if summary.seed is None else str(summary.seed)[:100],
        "hyperparameters": hyperparameters,
        # Finite by construction: summarize keeps the points whose step and metric are finite numbers.
        "eval_curve": [list(point) for point in summary.eval_curve],
        "eval_x": summary.eval_x,
        "submission_keys": storable(summary.submission)[0],
        "convergence": storable(outcome.convergence)[0],
    }
    return fields, [run_rules.stored_as_text(describe(changed))] if changed else []


def _check(run: dict, benchmark_names: frozenset[str], files) -> tuple[dict, list]:
    """(Run fields, findings) for one run; a time limit, an unreadable file or a fault in the checks is a
    finding on the run, not a crash of the batch."""
    ctx = rules.RunContext(
        ruleset=run["result__system__round__ruleset"],
        benchmark=run["result__benchmark__key"],
        benchmark_keys=benchmark_names,
        division=run["result__system__division"],
        quality_target=run["result__benchmark__quality_target"],
        higher_is_better=run["result__benchmark__higher_is_better"],
        require_init_stop_before_run_start=run[
            "result__system__round__require_init_stop_before_run_start"
        ],
        history=run["result__system__round__history"],
    )
    fields = {"checked": True, "success": False}
    try:
        with within(check_budget()):
            outcome = rules.check_run(files.file(run["path"]), run["path"], ctx)
    except OverBudget as over:
        fields["failure_reason"] = f"checking the log needed {over.text}"
        return fields, [run_rules.over_budget(run["path"], over)]
    except SoftTimeLimitExceeded:
        fields["failure_reason"] = "checking took longer than the time limit"
        return fields, [run_rules.timed_out(run["path"])]
    except OSError as error:
        fields["failure_reason"] = f"the log could not be read: {error.strerror}"
        return fields, [run_rules.unreadable(run["path"], error)]
    except Exception as error:
        if is_stop(error):  # a time limit or an interrupt ends the task, as it must
            raise
        # A fault in the checks (or in mlperf-logging): this run has an error finding, the batch goes on.
        log.exception("checking run %s (%s) failed", run["pk"], run["path"])
        fields["failure_reason"] = (
            f"checking the log failed inside the portal ({type(error).__name__})"
        )
        return fields, [run_rules.check_crashed(run["path"], error)]
    fields, stored_as_text = _outcome_fields(outcome)
    power_findings = []
    if run["result__power_result"]:
        power_fields, power_findings = _power(run, outcome.summary, files)
        fields |= power_fields
    return fields, [*outcome.findings, *stored_as_text, *power_findings]


def _power(run: dict, summary, files) -> tuple[dict, list]:
    """(the run's energy and power trace, findings) from its power logs (rules.power), read and checked
    inside a budget of their own. A power log that cannot be read, a budget passed, or a fault here withholds
    the energy with a warning: the time stays scored."""
    logs, found = [], []
    # The file being read: each power log, then the run's power folder while they are checked together.
    reading = ""
    try:
        with within(check_budget()):
            for reading in run["power_files"]:
                try:
                    data = files.read_bytes(reading, power_rules.MAX_LOG_BYTES)
                except OSError as error:
                    found.append(power_rules.unreadable_file(reading, error.strerror or str(error)))
                    continue
                if len(data) > power_rules.MAX_LOG_BYTES:
                    found.append(
                        power_rules.unreadable_file(reading, "larger than a power log can be")
                    )
                    continue
                logs.append(read_power_log(data, reading, kind_of(reading.rpartition("/")[2])))
            reading = f"{reading.rpartition('/')[0]}/" if logs else run["path"]
            outcome = power_rules.check_run_power(
                run["path"],
                logs,
                summary.run_start,
                summary.run_stop,
                run["result__system__nodes"],
                history=run["result__system__round__history"],
            )
    except OverBudget as over:
        return {"energy_j": None, "power_trace": {}}, [
            *found,
            power_rules.over_budget(reading or run["path"], over),
        ]
    except Exception as error:
        if is_stop(error):
            raise
        log.exception("checking the power logs of run %s (%s) failed", run["pk"], run["path"])
        return {"energy_j": None, "power_trace": {}}, [
            *found,
            power_rules.crashed(run["path"], error),
        ]
    energy = None if found else outcome.energy_j
    return {"energy_j": energy, "power_trace": outcome.trace}, [*found, *outcome.findings]


def check_runs(run_ids: list[int], validation_id: int) -> list[int]:
    """Check a batch of runs of one validation; return the submission ids whose validation this completed.

    Runs no longer there (their submission was ingested again) are passed over.
    """
    facts = _run_facts(run_ids)
    files = {}  # submission id -> its bundle's files
    checked = []
    for run_id in run_ids:
        if run_id in facts:
            run, names = facts[run_id]
            submission_id = run["result__system__submission_id"]
            if submission_id not in files:
                files[submission_id] = submission_files(submission_id)
            checked.append((run_id, run, *_check(run, names, files[submission_id])))
    if not checked:
        return []
    try:
        return _store(checked, validation_id)
    except (
        IntegrityError
    ):  # a repeat delivery: some runs were stored before; store the others one by one
        done = []
        for one in checked:
            try:
                done += _store([one], validation_id)
            except IntegrityError:
                done += _claim_finalize(one[1]["result__system__submission_id"])
        return sorted(set(done))


def _claim_finalize(submission_id: int) -> list[int]:
    """Whoever completes the last check claims finalize; the conditional UPDATE lets only one win."""
    claimed = update(
        submission_id,
        only_if={"status": Status.CHECKING, "runs_checked__gte": F("runs_total")},
        status=Status.FINALIZING,
    )
    return [submission_id] if claimed else []


def _store(checked: list[tuple], validation_id: int) -> list[int]:
    """Store the outcomes and count the runs, each once, in one transaction that also claims finalize.
    IntegrityError (and nothing stored) when a run was stored before."""
    worker = f"{socket.gethostname()}:{os.getpid()}"
    per_submission: dict[int, int] = {}
    with transaction.atomic():
        # The unique rows claim the runs once; they record which process checked them.
        RunCheck.objects.bulk_create(
            [
                RunCheck(validation_id=validation_id, run_id=run_id, worker=worker)
                for run_id, *_ in checked
            ]
        )
        update_rows(Run, [(run_id, fields) for run_id, _, fields, _ in checked])
        findings = []
        for run_id, run, _fields, found in checked:
            submission_id = run["result__system__submission_id"]
            per_submission[submission_id] = per_submission.get(submission_id, 0) + 1
            findings += [
                Finding.from_rule(
                    f,
                    default_file=run["path"],
                    validation_id=validation_id,
                    result_id=run["result_id"],
                    run_id=run_id,
                    system_key=run["result__system__key"],
                    benchmark=run["result__benchmark__key"],
                    advisory=run["result__system__round__history"],
                )
                for f in found
            ]
        Finding.objects.bulk_create(findings)
        done = []
        for submission_id, count in per_submission.items():
            update(submission_id, runs_checked=F("runs_checked") + count)
            done += _claim_finalize(submission_id)
        return done
