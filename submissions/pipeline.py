"""The pipeline's steps around the pure domain code: ingest → check each run → finalize.

Each step takes ids, claims its work with a conditional UPDATE so that a retried or
duplicated task does nothing twice, and leaves the database in a state the next step
(or a page) can read. Tasks in tasks.py only call these and queue the next step.
"""

import json
import logging
import shutil
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from leaderboard.models import Benchmark, Result, Run, Submitter, System

from . import scoring
from .bundles import BundleError, LayoutError, Limits, detect, unpack
from .logs import parse_file, summarize
from .models import Submission
from .systems import fields_of

log = logging.getLogger(__name__)
Status = Submission.Status


def work_dir(submission_id: int) -> Path:
    """The submission's private folder for its unpacked bundle."""
    return Path(settings.MEDIA_ROOT) / "work" / str(submission_id)


def bundle_limits() -> Limits:
    return Limits(
        max_total_bytes=settings.BUNDLE_MAX_TOTAL_BYTES,
        max_files=settings.BUNDLE_MAX_FILES,
        max_file_bytes=settings.BUNDLE_MAX_FILE_BYTES,
        max_ratio=settings.BUNDLE_MAX_RATIO,
    )


def fail(submission_id: int, message: str, rule: str = "") -> None:
    Submission.objects.filter(pk=submission_id).update(
        status=Status.FAILED, message=message, rule=rule, finished_at=timezone.now()
    )
    shutil.rmtree(work_dir(submission_id), ignore_errors=True)


def ingest(submission_id: int) -> list[int]:
    """Unpack the bundle, record its systems, results and runs; return the run ids to check."""
    claimed = Submission.objects.filter(
        pk=submission_id, status__in=[Status.RECEIVED, Status.INGESTING]
    ).update(status=Status.INGESTING, attempts=F("attempts") + 1)
    if not claimed:
        return []
    submission = Submission.objects.select_related("round").get(pk=submission_id)
    dest = work_dir(submission_id)
    shutil.rmtree(dest, ignore_errors=True)  # a retried ingest starts clean
    try:
        unpack(submission.bundle.path, dest, bundle_limits())
        return _record(submission, detect(dest), dest)
    except (BundleError, LayoutError) as error:
        fail(submission_id, str(error), error.rule)
        return []


def _benchmarks_by_folder(round_) -> dict[str, Benchmark]:
    by_name = {}
    for bench in round_.benchmarks.all():
        for name in [bench.key, *bench.aliases]:
            by_name[name.lower()] = bench
    return by_name


def _scaling_factor(dest: Path, entry, notes: list[str]) -> float:
    name = next((f for f in entry.extra_files if f.endswith("/scaling.json")), None)
    if not name:
        return 1.0
    try:
        return float(json.loads((dest / name).read_text())["scaling_factor"])
    except (ValueError, KeyError, TypeError, OSError) as error:
        notes.append(f"{name}: not read ({error}); the score is not scaled.")
        return 1.0


@transaction.atomic
def _record(submission: Submission, layout, dest: Path) -> list[int]:
    round_ = submission.round
    notes = list(layout.notes)
    submitter, _ = Submitter.objects.get_or_create(name=layout.submitter)
    System.objects.filter(submission=submission).delete()  # idempotent on retry

    systems = {}
    for entry in layout.systems:
        fields = fields_of(entry.description, entry.description_format)
        fields["name"] = fields["name"] or entry.name
        systems[entry.name] = System.objects.create(
            submission=submission, round=round_, submitter=submitter, key=system_key(entry.name),
            description=entry.description, description_path=entry.description_path or "", **fields,
        )
    benchmarks = _benchmarks_by_folder(round_)
    runs = []
    for entry in layout.results:
        bench = benchmarks.get(entry.benchmark.lower())
        if bench is None:
            notes.append(f"{entry.path}: '{entry.benchmark}' is not a benchmark of {round_.name}; ignored.")
            continue
        system = systems.get(entry.system)
        if system is None:
            system = systems[entry.system] = System.objects.create(
                submission=submission, round=round_, submitter=submitter,
                key=system_key(entry.system), name=entry.system,
            )
        result = Result.objects.create(
            system=system, benchmark=bench, path=entry.path,
            scaling_factor=_scaling_factor(dest, entry, notes),
        )
        for position, path in enumerate(entry.run_files):
            runs.append(Run(result=result, index=_run_index(path, position), path=path))
    Run.objects.bulk_create(runs)
    run_ids = list(Run.objects.filter(result__system__submission=submission).values_list("pk", flat=True))
    if not run_ids:
        found = sorted({e.benchmark for e in layout.results})
        message = (
            f"No run logs for a benchmark of {round_.name}: found {', '.join(found) or 'none'}; "
            f"expected results/<system>/<benchmark>/result_N.txt with <benchmark> one of "
            f"{', '.join(b.key for b in round_.benchmarks.all())}."
        )
        raise LayoutError("layout.no-benchmarks", message)  # rolls back what was recorded
    Submission.objects.filter(pk=submission.pk).update(
        submitter=submitter, status=Status.CHECKING, notes=notes,
        runs_total=len(run_ids), runs_checked=0,
    )
    return run_ids


def system_key(name: str) -> str:
    """A system's key is one URL segment: nested v0.5 names keep their parts, joined by '~'."""
    return name.strip("/").replace("/", "~")


def _run_index(path: str, fallback: int) -> int:
    stem = Path(path).stem  # result_12
    digits = stem.rpartition("_")[2]
    return int(digits) if digits.isdigit() else fallback


def check_run(run_id: int) -> int | None:
    """Read one run's log and store what it says; return the submission id if this was the last run."""
    run = Run.objects.select_related("result__benchmark__round", "result__system").get(pk=run_id)
    bench = run.result.benchmark
    submission_id = run.result.system.submission_id
    path = work_dir(submission_id) / run.path
    try:
        summary = summarize(
            parse_file(path),
            require_init_stop_before_run_start=bench.round.require_init_stop_before_run_start,
            quality_target=bench.quality_target,
            higher_is_better=bench.higher_is_better,
        )
        fields = {
            "success": summary.success,
            "failure_reason": summary.failure_reason[:500],
            "time_to_train_s": summary.time_to_train_s,
            "status": str(summary.status or "")[:50],
            "seed": "" if summary.seed is None else str(summary.seed)[:100],
            "hyperparameters": summary.hyperparameters,
            "eval_curve": [list(point) for point in summary.eval_curve],
            "eval_x": summary.eval_x,
            "submission_keys": summary.submission,
        }
    except OSError as error:
        fields = {"success": False, "failure_reason": f"{run.path} could not be read: {error.strerror}."}
    with transaction.atomic():
        changed = Run.objects.filter(pk=run_id, checked=False).update(checked=True, **fields)
        if changed:
            Submission.objects.filter(pk=submission_id).update(runs_checked=F("runs_checked") + 1)
    # Whoever completes the last check claims finalize; the conditional UPDATE lets only one win.
    claimed = Submission.objects.filter(
        pk=submission_id, status=Status.CHECKING, runs_checked__gte=F("runs_total")
    ).update(status=Status.FINALIZING)
    return submission_id if claimed else None


def score_result(result: Result, runs: list[Run]) -> None:
    """Set the result's score and mark each run counted or dropped (in memory)."""
    bench = result.benchmark
    times = [r.time_to_train_s if r.success else None for r in runs]
    if bench.scoring == Benchmark.Scoring.FIRST_CONVERGING:
        score = scoring.first_converging(times, bench.counted_runs or bench.required_runs)
    else:
        score = scoring.olympic(times, bench.required_runs)
    for position, run in enumerate(runs):
        run.counted = position in score.counted
        run.dropped = position in score.dropped
    result.score_s = None if score.seconds is None else score.seconds * result.scaling_factor
    result.speedup = scoring.speedup(bench.reference_time_s, result.score_s)
    result.runs_counted = len(score.counted)
    result.score_message = score.message[:500]


def finalize(submission_id: int) -> None:
    """Score every result and set the submission's final status."""
    submission = Submission.objects.select_related("round").get(pk=submission_id)
    if submission.status != Status.FINALIZING:
        return
    results = list(
        Result.objects.filter(system__submission=submission)
        .select_related("benchmark", "system")
        .prefetch_related("runs")
    )
    all_runs = []
    for result in results:
        runs = list(result.runs.all())
        score_result(result, runs)
        all_runs.extend(runs)
    unscored = [r for r in results if r.score_s is None]
    with transaction.atomic():
        Run.objects.bulk_update(all_runs, ["counted", "dropped"], batch_size=500)
        Result.objects.bulk_update(
            results, ["score_s", "speedup", "runs_counted", "score_message"], batch_size=500
        )
        status = Status.INVALID if unscored else Status.VALID
        message = f"{len(results) - len(unscored)} of {len(results)} results scored."
        if unscored:
            message += " No score: " + "; ".join(
                f"{r.system.key}/{r.benchmark.key}: {r.score_message}" for r in unscored[:20]
            )
        Submission.objects.filter(pk=submission_id).update(
            status=status, message=message, finished_at=timezone.now()
        )
        if submission.publish_when_valid and (status == Status.VALID or submission.round.history):
            publish(submission_id)
    shutil.rmtree(work_dir(submission_id), ignore_errors=True)


@transaction.atomic
def publish(submission_id: int) -> None:
    """Make a submission's scored results public, withdrawing the submitter's earlier ones."""
    submission = Submission.objects.get(pk=submission_id)
    earlier = Submission.objects.filter(
        round=submission.round, submitter=submission.submitter, status=Status.PUBLISHED
    ).exclude(pk=submission_id)
    Result.objects.filter(system__submission__in=earlier).update(published=False)
    System.objects.filter(submission__in=earlier).update(published=False)
    earlier.update(status=Status.WITHDRAWN)
    Result.objects.filter(system__submission=submission, score_s__isnull=False).update(published=True)
    System.objects.filter(submission=submission, results__published=True).update(published=True)
    Submission.objects.filter(pk=submission_id).update(status=Status.PUBLISHED)
