"""Finalizing a validation: score each result, apply result-level rules, set the verdict, publish."""

import logging
from collections import Counter
from pathlib import PurePosixPath

from django.db import transaction
from django.db.models import Count, Prefetch, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from audit.log import record
from leaderboard.models import Benchmark, Result, Run, System
from notifications.emit import emit
from submissions.models import Finding, Submission, Validation
from submissions.refchecks import jobs as refchecks

from .. import energy, leases, rules, scoring
from ..budget import OverBudget, within
from ..bundles.runlogs import SUMMARIZER_RUN_FILE, result_files
from .common import Status, clear_work_when_final, step_budget, submission_files, update
from .publication import publish, published_while_checking
from .update_rows import update_rows

log = logging.getLogger(__name__)


def score_result(
    result: Result,
    runs: list[Run],
    rejected: set[int] = frozenset(),
    failure_rules: dict[int, str] | None = None,
) -> None:
    """Set the result's score and mark each run counted or dropped (in memory), as
    scoring.score_result decides; `rejected`: the ids of runs whose logs break a blocking rule;
    `failure_rules`: the rule id of each run's first error finding (the no-score reason counts by it)."""
    failure_rules = failure_rules or {}
    score = scoring.score_result(
        _benchmark_scoring(result.benchmark),
        [
            scoring.RunTime(
                r.time_to_train_s,
                r.success,
                r.pk in rejected,
                r.failure_reason,
                failure_rules.get(r.pk, ""),
                bool(SUMMARIZER_RUN_FILE.match(PurePosixPath(r.path).name)),
                PurePosixPath(r.path).name,
            )
            for r in runs
        ],
        result.scaling_factor,
        ingest_note=result.score_message,
        as_published=result.system.round.history,
    )
    for position, run in enumerate(runs):
        run.counted = position in score.counted
        run.dropped = position in score.dropped
    result.score_s, result.speedup = score.seconds, score.speedup
    result.runs_counted, result.score_message = len(score.counted), score.message
    if (
        result.power_result
    ):  # the energy of the same runs, scaled alike (submissions/checking/energy.py)
        result.energy_j, result.energy_message = energy.score_energy(
            [r.energy_j for r in runs], score.counted, result.scaling_factor
        )


def _benchmark_scoring(bench: Benchmark) -> scoring.BenchmarkScoring:
    return scoring.BenchmarkScoring(
        bench.key, bench.required_runs, bench.scoring, bench.counted_runs, bench.reference_time_s
    )


def _tolerate_failed_runs(validation: Validation, results: list[Result]) -> None:
    """Turn the errors of the runs that scoring tolerates into warnings."""
    errors = validation.findings.filter(severity="error", run__isnull=False)
    failing: dict[int, set[int]] = {}
    for result_id, run_id in errors.values_list("result_id", "run_id"):
        failing.setdefault(result_id, set()).add(run_id)
    tolerated = [
        run_id
        for result in results
        for run_id in scoring.tolerated_runs(
            _benchmark_scoring(result.benchmark),
            scored=result.score_s is not None,
            failing_runs=failing.get(result.pk, set()),
        )
    ]
    errors.filter(run_id__in=tolerated).update(
        severity="warning", hint=Concat("hint", Value(scoring.TOLERATED_HINT))
    )


def _system_facts(system: System) -> rules.SystemFacts:
    return rules.SystemFacts(
        description=system.description,
        description_format=_description_format(system),
        description_path=system.description_path,
        division=system.division,
        category=system.category,
    )


def _result_findings(result: Result, runs: list[Run], files) -> tuple[list[rules.Finding], float]:
    """The result-level findings, and the factor its olympic mean is multiplied by (rules.score_factor)."""
    system, bench = result.system, result.benchmark
    ctx = rules.ResultContext(
        ruleset=system.round.ruleset,
        benchmark=bench.key,
        required_runs=bench.required_runs,
        result_path=result.path,
        # Each run under its rules' name (result_N.txt) wherever it lies, as the RCP check reads a folder.
        result_dir=result_files(files, result.path, [(r.index, r.path) for r in runs]),
        division=system.division,
        category=system.category,
        blocking_rules=frozenset(system.round.blocking_rules or ()),
    )
    facts = [
        rules.RunFacts(
            rel_path=r.path,
            success=r.success,
            seed=r.seed or None,
            hyperparameters=r.hyperparameters,
            submission=r.submission_keys,
            convergence=r.convergence,
            index=r.index,
        )
        for r in runs
    ]
    system_facts = _system_facts(system)
    findings = rules.check_result(
        ctx,
        facts,
        system_facts,
        include_system=False,  # checked once per system
        include_rcp=False,
    )
    rcp_findings, computed = rules.result_rcp(ctx, facts, system_facts)
    findings += rcp_findings
    # What scaling.json claims, as ingest read and checked it (bundle.scaling-factor), against the portal's;
    # in imported history, the published factor is the score's.
    factor, compared = rules.score_factor(
        computed,
        result.claimed_scaling_factor,
        result.path,
        history=system.round.history,
        normalised=system.round.rcp_normalised,
    )
    return findings + compared, factor


def _description_format(system: System) -> str:
    return "entry.json" if system.description_path.endswith("entry.json") else "system.json"


def finalize(submission_id: int, owner: str | None = None) -> None:
    """Score every result, store result-level findings and the verdict; publish if asked to.

    The steps, each a function below: claim the step (leases.claim: `owner`, a task, holds it; a second
    finalize is refused); check the systems; score and check each result; store the findings, the counts
    and the scores; give the verdict (only the finalize that moves the status on wins: a duplicate rolls
    back); publish if asked to; plan the reference checks; clear the work folder."""
    owner = owner or leases.new_owner()
    if not leases.claim(submission_id, owner, Status.FINALIZING, start_from=[Status.FINALIZING]):
        return
    try:
        _finalize(submission_id)
    finally:
        leases.release(submission_id, owner)


def _finalize(submission_id: int) -> None:
    claimed = _running(submission_id)
    if claimed is None:
        return
    submission, validation = claimed
    advisory = submission.round.history
    results = _results_of(submission)
    rows = _system_findings(submission, validation, advisory)
    result_rows, runs = _score_and_check(
        results, validation, submission_files(submission_id), advisory
    )
    with transaction.atomic():
        _store(validation, results, runs, rows + result_rows, advisory)
        if not _give_verdict(submission, validation, results, advisory):
            transaction.set_rollback(True)
            return
        if submission.publish_when_valid or published_while_checking(submission):
            publish(submission_id)  # its results that no blocking finding holds
        _plan_reference_checks(submission_id)
    clear_work_when_final(submission_id)


def _running(submission_id: int) -> tuple[Submission, Validation] | None:
    """The submission and its running validation, when it waits to be finalized; else None."""
    submission = Submission.objects.select_related("round", "organisation").get(pk=submission_id)
    validation = submission.validations.filter(status=Validation.Status.RUNNING).first()
    if submission.status != Status.FINALIZING or validation is None:
        return None
    return submission, validation


def _results_of(submission: Submission) -> list[Result]:
    """The submission's results with their runs, in a fixed order."""
    # Ordered by pk and index, not by the default orderings, which join the submitter and round again; without
    # eval_curve, the runs' largest field, unused here.
    runs = Run.objects.defer("eval_curve", "power_trace").order_by("index")
    return list(
        Result.objects.filter(system__submission=submission)
        .order_by("pk")
        .select_related("benchmark", "system__round")
        .prefetch_related(Prefetch("runs", runs))
    )


def _system_findings(
    submission: Submission, validation: Validation, advisory: bool
) -> list[Finding]:
    """The findings of the submission's system descriptions, as rows to store."""
    rows = []
    for system in (
        System.objects.filter(submission=submission).select_related("round").order_by("pk")
    ):
        for f in rules.check_system(_system_facts(system), system.round.ruleset):
            rows.append(
                Finding.from_rule(
                    f,
                    default_file=system.description_path,
                    validation=validation,
                    system_key=system.key,
                    advisory=advisory,
                )
            )
    return rows


def _run_failures(validation: Validation, advisory: bool) -> tuple[set[int], dict[int, str]]:
    """The runs a blocking finding rejects (none when advisory: imported history keeps its scores), and
    for each run with an error the rule of its first one (a failed run's reason)."""
    rejected = (
        set()
        if advisory
        else set(
            validation.findings.filter(severity="error", run__isnull=False).values_list(
                "run_id", flat=True
            )
        )
    )
    failure_rules: dict[int, str] = {}
    for run_id, rule in (
        validation.findings.filter(severity="error", run__isnull=False)
        .order_by("-pk")
        .values_list("run_id", "rule")
    ):
        failure_rules[run_id] = rule  # the first (lowest pk) wins
    return rejected, failure_rules


def _score_and_check(
    results: list[Result], validation: Validation, files, advisory: bool
) -> tuple[list[Finding], list[Run]]:
    """Score each result (on the objects, stored by _store) and check it: the result-level findings as
    rows, and every run (counted or dropped by its score)."""
    rejected, failure_rules = _run_failures(validation, advisory)
    rows, all_runs = [], []
    for result in results:
        runs = list(result.runs.all())
        try:
            with within(step_budget()):
                findings, result.scaling_factor = _result_findings(result, runs, files)
        except OverBudget as over:  # the result's finding names the limit; the others are checked
            findings, result.scaling_factor = [rules.result_over_budget(result.path, over)], 1.0
        score_result(result, runs, rejected, failure_rules)
        if result.score_s is None:
            findings.append(rules.no_score(result.score_message, result.path))
        findings += rules.check_speed(
            result.benchmark.key,
            result.score_s,
            result.system.accelerator_model,
            result.system.accelerator_count,
            result.path,
        )
        all_runs.extend(runs)
        for f in findings:
            rows.append(
                Finding.from_rule(
                    f,
                    default_file=result.path,
                    validation=validation,
                    result=result,
                    system_key=result.system.key,
                    benchmark=result.benchmark.key,
                    advisory=advisory,
                )
            )
    return rows, all_runs


def _store(
    validation: Validation,
    results: list[Result],
    runs: list[Run],
    rows: list[Finding],
    advisory: bool,
) -> None:
    """Store the new findings, each result's counts of them, and the scores."""
    _tolerate_failed_runs(validation, results)
    Finding.objects.bulk_create(rows, batch_size=500)
    per_result = {
        row["result_id"]: row
        for row in Finding.objects.filter(validation=validation)
        .values("result_id")
        .annotate(
            errors=Count("pk", filter=Q(severity="error")),
            warnings=Count("pk", filter=Q(severity="warning")),
        )
    }
    for result in results:
        counts = per_result.get(result.pk, {})
        result.error_count, result.warning_count = (
            counts.get("errors", 0),
            counts.get("warnings", 0),
        )
        result.advisory = advisory
    update_rows(Run, [(run.pk, {"counted": run.counted, "dropped": run.dropped}) for run in runs])
    update_rows(
        Result,
        [
            (
                r.pk,
                {
                    "score_s": r.score_s,
                    "speedup": r.speedup,
                    "scaling_factor": r.scaling_factor,
                    "runs_counted": r.runs_counted,
                    "score_message": r.score_message,
                    "energy_j": r.energy_j,
                    "energy_message": r.energy_message,
                    "error_count": r.error_count,
                    "warning_count": r.warning_count,
                    "advisory": r.advisory,
                },
            )
            for r in results
        ],
    )


def _give_verdict(
    submission: Submission, validation: Validation, results: list[Result], advisory: bool
) -> bool:
    """Close the validation with its verdict and move the submission on; False when another finalize
    moved it on first (the caller rolls back)."""
    severities = Counter(validation.findings.values_list("severity", flat=True))
    verdict = Status.INVALID if severities["error"] else Status.VALID
    scored = sum(r.score_s is not None for r in results)
    message = (
        f"{scored} of {len(results)} results scored; findings: {severities['error']} errors, "
        f"{severities['warning']} warnings, {severities['info']} info"
        + (" (advisory: imported history)." if advisory else ".")
    )
    Validation.objects.filter(pk=validation.pk).update(
        status=Validation.Status.DONE,
        verdict=verdict,
        finished_at=timezone.now(),
        errors=severities["error"],
        warnings=severities["warning"],
        infos=severities["info"],
        scored=scored,
    )
    if not update(
        submission.pk,
        only_if={"status": Status.FINALIZING},
        status=verdict,
        message=message,
        finished_at=timezone.now(),
    ):
        return False
    record(
        "validation.verdict",
        obj=submission,
        round=submission.round,
        verdict=verdict,
        validation=validation.number,
        errors=severities["error"],
        warnings=severities["warning"],
        infos=severities["info"],
    )
    emit(
        "revalidation.finished" if validation.number > 1 else "validation.finished",
        submission=submission.pk,
        validation=validation.pk,
    )
    return True


def _plan_reference_checks(submission_id: int) -> None:
    """Closed-division results of a live round: measured on the agents (sent once this commits). The
    checks only inform reviewers; the verdict does not wait for them, and a fault here never undoes it."""
    try:
        with transaction.atomic():  # a savepoint
            refchecks.plan_for_submission(submission_id)
    except Exception:
        log.exception("planning the reference checks of submission %s failed", submission_id)
