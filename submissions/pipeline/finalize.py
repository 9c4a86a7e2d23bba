"""Finalizing a validation: score each result, apply result-level rules, set the verdict, publish."""

import re
from collections import Counter

from django.db import transaction
from django.db.models import Count, Prefetch, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from leaderboard.models import Benchmark, Result, Run, System

from .. import rules, scoring
from ..bundles.runlogs import result_files
from ..models import Finding, Submission, Validation
from .common import Status, clear_work, submission_files, update, update_rows
from .publication import publish


def score_result(result: Result, runs: list[Run], rejected: set[int] = frozenset()) -> None:
    """Set the result's score and mark each run counted or dropped (in memory).

    A run that failed, or whose log breaks a rule (`rejected` run ids), counts as infinitely slow. The
    score is multiplied by result.scaling_factor, the RCP normalisation the portal computed.
    """
    bench = result.benchmark
    times = [r.time_to_train_s if r.success and r.pk not in rejected else None for r in runs]
    drop = rules.tolerated_error_files(bench.key)
    if bench.scoring == Benchmark.Scoring.FIRST_CONVERGING:
        score = scoring.first_converging(times, bench.counted_runs or bench.required_runs, drop)
    else:
        score = scoring.olympic(times, bench.required_runs, drop)
    for position, run in enumerate(runs):
        run.counted = position in score.counted
        run.dropped = position in score.dropped
    result.score_s = None if score.seconds is None else score.seconds * result.scaling_factor
    result.speedup = scoring.speedup(bench.reference_time_s, result.score_s)
    result.runs_counted = len(score.counted)
    if not runs and result.score_message:
        return  # ingest said why the folder has no runs
    result.score_message = (score.message + _failures_in_words(runs, times) if score.seconds is None
                            else score.message)[:500]


_LINE_NOTE = re.compile(r" \((line|line count) \d+\)")  # where in its own log; runs differ there


def _failures_in_words(runs: list[Run], times: list) -> str:
    """' Why: <the most common reason> (N runs).' for a result left without a score by failed runs."""
    reasons = Counter(_LINE_NOTE.sub("", run.failure_reason) or "the log breaks a rule"
                      for run, t in zip(runs, times) if t is None)
    if not reasons:
        return ""
    (reason, count), = reasons.most_common(1)
    return f" Why: {reason} ({count} run{'s' if count != 1 else ''})."


TOLERATED = " Tolerated: the result still scores, with this run counted as infinitely slow."


def _tolerate_failed_runs(validation: Validation, results: list[Result]) -> None:
    """A result may have a few failed runs (olympic scoring drops them): their errors become warnings.

    mlperf-logging's package checker accepts one non-compliant file per result (four for UNet3D);
    a result scored from the first converging runs (v0.5 NCF) expects failures by design.
    """
    errors = validation.findings.filter(severity="error", run__isnull=False)
    failing: dict[int, set[int]] = {}
    for result_id, run_id in errors.values_list("result_id", "run_id"):
        failing.setdefault(result_id, set()).add(run_id)
    tolerated = [
        run_id
        for result in results
        if result.score_s is not None and result.pk in failing and (
            result.benchmark.scoring == Benchmark.Scoring.FIRST_CONVERGING
            or len(failing[result.pk]) <= rules.tolerated_error_files(result.benchmark.key)
        )
        for run_id in failing[result.pk]
    ]
    errors.filter(run_id__in=tolerated).update(severity="warning", hint=Concat("hint", Value(TOLERATED)))


def _system_facts(system: System) -> rules.SystemFacts:
    return rules.SystemFacts(
        description=system.description, description_format=_description_format(system),
        description_path=system.description_path, division=system.division, category=system.category,
    )


def _result_findings(result: Result, runs: list[Run], files) -> tuple[list[rules.Finding], float | None]:
    """The result-level findings, and the RCP factor the portal computed (None where none was)."""
    system, bench = result.system, result.benchmark
    ctx = rules.ResultContext(
        ruleset=system.round.ruleset, benchmark=bench.key, required_runs=bench.required_runs,
        result_path=result.path,
        # Each run under its rules' name (result_N.txt) wherever it lies, as the RCP check reads a folder.
        result_dir=result_files(files, result.path, [(r.index, r.path) for r in runs]),
        division=system.division, category=system.category,
        blocking_rules=frozenset(system.round.blocking_rules or ()),
    )
    facts = [rules.RunFacts(rel_path=r.path, success=r.success, seed=r.seed or None,
                            hyperparameters=r.hyperparameters, submission=r.submission_keys,
                            convergence=r.convergence, index=r.index) for r in runs]
    system_facts = _system_facts(system)
    findings = rules.check_result(ctx, facts, system_facts, include_system=False,  # checked once per system
                                  include_rcp=False)
    rcp_findings, factor = rules.result_rcp(ctx, facts, system_facts)
    findings += rcp_findings
    # What scaling.json claims, as ingest read and checked it (bundle.scaling-factor), against the portal's.
    findings += rules.compare_scaling(result.claimed_scaling_factor, factor, result.path)
    return findings, factor


def _no_score(result: Result) -> rules.Finding:
    return rules.Finding(
        "error", "result.no-score", f"No score: {result.score_message}",
        "Every result needs the round's number of runs, and at most one may fail.", result.path,
    )


def _description_format(system: System) -> str:
    return "entry.json" if system.description_path.endswith("entry.json") else "system.json"


def finalize(submission_id: int) -> None:
    """Score every result, store result-level findings and the verdict; publish if asked to."""
    submission = Submission.objects.select_related("round").get(pk=submission_id)
    validation = submission.validations.filter(status=Validation.Status.RUNNING).first()
    if submission.status != Status.FINALIZING or validation is None:
        return
    advisory = submission.round.history
    files = submission_files(submission_id)
    # Ordered by pk and index, not by the default orderings, which join the submitter and round again; without
    # eval_curve, the runs' largest field, unused here.
    runs = Run.objects.defer("eval_curve").order_by("index")
    results = list(
        Result.objects.filter(system__submission=submission).order_by("pk")
        .select_related("benchmark", "system__round").prefetch_related(Prefetch("runs", runs))
    )
    all_runs, new_findings = [], []
    # Advisory findings (imported history) do not change scores; blocking ones reject their run.
    rejected = set() if advisory else set(
        validation.findings.filter(severity="error", run__isnull=False).values_list("run_id", flat=True)
    )
    for system in System.objects.filter(submission=submission).select_related("round").order_by("pk"):
        for f in rules.check_system(_system_facts(system), system.round.ruleset):
            new_findings.append(Finding(
                validation=validation, system_key=system.key, severity=f.severity, rule=f.rule,
                file=f.file or system.description_path, line=f.line, message=f.message, hint=f.hint,
                advisory=advisory,
            ))
    for result in results:
        runs = list(result.runs.all())
        findings, factor = _result_findings(result, runs, files)
        result.scaling_factor = rules.normalisation(factor)
        score_result(result, runs, rejected)
        if result.score_s is None:
            findings.append(_no_score(result))
        findings += rules.check_speed(result.benchmark.key, result.score_s,
                                      result.system.accelerator_model, result.system.accelerator_count, result.path)
        all_runs.extend(runs)
        for f in findings:
            new_findings.append(Finding(
                validation=validation, result=result, system_key=result.system.key,
                benchmark=result.benchmark.key, severity=f.severity, rule=f.rule,
                file=f.file or result.path, line=f.line, message=f.message, hint=f.hint, advisory=advisory,
            ))
    with transaction.atomic():
        _tolerate_failed_runs(validation, results)
        Finding.objects.bulk_create(new_findings, batch_size=500)
        per_result = {
            row["result_id"]: row for row in Finding.objects.filter(validation=validation)
            .values("result_id")
            .annotate(errors=Count("pk", filter=Q(severity="error")), warnings=Count("pk", filter=Q(severity="warning")))
        }
        for result in results:
            counts = per_result.get(result.pk, {})
            result.error_count, result.warning_count = counts.get("errors", 0), counts.get("warnings", 0)
            result.advisory = advisory
        update_rows(Run, [(run.pk, {"counted": run.counted, "dropped": run.dropped}) for run in all_runs])
        update_rows(Result, [(r.pk, {
            "score_s": r.score_s, "speedup": r.speedup, "scaling_factor": r.scaling_factor, "runs_counted": r.runs_counted, "score_message": r.score_message,
            "error_count": r.error_count, "warning_count": r.warning_count, "advisory": r.advisory,
        }) for r in results])
        severities = Counter(validation.findings.values_list("severity", flat=True))
        verdict = Status.INVALID if severities["error"] else Status.VALID
        scored = sum(r.score_s is not None for r in results)
        message = (
            f"{scored} of {len(results)} results scored; findings: {severities['error']} errors, "
            f"{severities['warning']} warnings, {severities['info']} info"
            + (" (advisory: imported history)." if advisory else ".")
        )
        Validation.objects.filter(pk=validation.pk).update(
            status=Validation.Status.DONE, verdict=verdict, finished_at=timezone.now(),
            errors=severities["error"], warnings=severities["warning"], infos=severities["info"],
        )
        # Only the finalize that moves the status on wins; a duplicate rolls back here.
        if not update(submission_id, only_if={"status": Status.FINALIZING},
                      status=verdict, message=message, finished_at=timezone.now()):
            transaction.set_rollback(True)
            return
        if submission.publish_when_valid:
            publish(submission_id)  # its results that no blocking finding holds
    clear_work(submission_id)
