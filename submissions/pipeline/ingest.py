"""Open a bundle (in place, or unpacked), record its systems, results and runs, and start a validation."""

import json

from django.db import transaction
from django.db.models import F, Max

from leaderboard.models import Benchmark, Result, Run, Submitter, System

from ..bundles import BundleError, LayoutError, detect
from ..models import Submission, Validation
from ..systems import fields_of
from .common import Status, fail, open_submission, update


def ingest(submission_id: int) -> tuple[int | None, list[int]]:
    """Open and record the bundle; return (validation id, run ids to check)."""
    claimed = update(
        submission_id, only_if={"status__in": [Status.RECEIVED, Status.INGESTING]},
        status=Status.INGESTING, attempts=F("attempts") + 1,
    )
    if not claimed:
        return None, []
    submission = Submission.objects.select_related("round").get(pk=submission_id)
    try:
        files = open_submission(submission)
        return _record(submission, detect(files), files)
    except (BundleError, LayoutError) as error:
        fail(submission_id, str(error), error.rule)
        return None, []


def revalidate(submission_id: int, reason: str, user=None) -> tuple[int | None, list[int]]:
    """Check a final submission again (e.g. after a rules fix); findings of earlier passes are kept."""
    final = [Status.VALID, Status.INVALID, Status.PUBLISHED]
    submission = Submission.objects.select_related("round").get(pk=submission_id)
    was_published = submission.status == Status.PUBLISHED
    if not update(submission_id, only_if={"status__in": final}, status=Status.INGESTING, attempts=0):
        return None, []
    try:
        open_submission(submission)
    except (BundleError, LayoutError, OSError) as error:
        fail(submission_id, f"Re-validation could not open the bundle: {error}", getattr(error, "rule", ""))
        return None, []
    with transaction.atomic():
        run_ids = list(Run.objects.filter(result__system__submission_id=submission_id).order_by("pk")
                       .values_list("pk", flat=True))
        validation = _start_validation(submission, run_ids, reason, user)
        if was_published:
            update(submission_id, publish_when_valid=True)
    return validation.pk, run_ids


def _start_validation(submission: Submission, run_ids: list[int], reason: str, user=None) -> Validation:
    number = (submission.validations.aggregate(n=Max("number"))["n"] or 0) + 1
    validation = Validation.objects.create(
        submission=submission, number=number, reason=reason, requested_by=user
    )
    update(submission.pk, status=Status.CHECKING, runs_total=len(run_ids), runs_checked=0)
    return validation


def _benchmarks_by_folder(round_) -> dict[str, Benchmark]:
    by_name = {}
    for bench in round_.benchmarks.all():
        for name in [bench.key, *bench.aliases]:
            by_name[name.lower()] = bench
    return by_name


def _scaling_factor(files, entry, notes: list[str]) -> float:
    name = next((f for f in entry.extra_files if f.endswith("/scaling.json")), None)
    if not name:
        return 1.0
    try:
        return float(json.loads(files.read_bytes(name))["scaling_factor"])
    except (ValueError, KeyError, TypeError, OSError) as error:
        notes.append(f"{name}: not read ({error}); the score is not scaled.")
        return 1.0


def system_key(name: str) -> str:
    """A system's key is one URL segment: nested v0.5 names keep their parts, joined by '~'."""
    return name.strip("/").replace("/", "~")


def _run_index(path: str, fallback: int) -> int:
    name = path.rpartition("/")[2]  # result_12.txt; its stem as pathlib's, without a Path per run
    dot = name.rfind(".")
    digits = (name[:dot] if 0 < dot < len(name) - 1 else name).rpartition("_")[2]
    return int(digits) if digits.isdigit() else fallback


@transaction.atomic
def _record(submission: Submission, layout, files) -> tuple[int, list[int]]:
    round_ = submission.round
    notes = list(layout.notes)
    submitter, _ = Submitter.objects.get_or_create(name=layout.submitter)
    System.objects.filter(submission=submission).delete()  # idempotent on retry

    # Three INSERTs however large the bundle: systems, then results, then runs.
    systems = {}
    for entry in layout.systems:
        fields = fields_of(entry.description, entry.description_format)
        fields["name"] = fields["name"] or entry.name
        systems[entry.name] = System(
            submission=submission, round=round_, submitter=submitter, key=system_key(entry.name),
            description=entry.description, description_path=entry.description_path or "", **fields,
        )
    benchmarks = _benchmarks_by_folder(round_)
    results = []  # (Result, its layout entry)
    for entry in layout.results:
        bench = benchmarks.get(entry.benchmark.lower())
        if bench is None:
            notes.append(f"{entry.path}: '{entry.benchmark}' is not a benchmark of {round_.name}; ignored.")
            continue
        if entry.system not in systems:
            notes.append(f"{entry.path}: no description for system '{entry.system}'.")
            systems[entry.system] = System(
                submission=submission, round=round_, submitter=submitter,
                key=system_key(entry.system), name=entry.system,
            )
        result = Result(
            system=systems[entry.system], benchmark=bench, path=entry.path,
            scaling_factor=_scaling_factor(files, entry, notes),
        )
        results.append((result, entry))
    System.objects.bulk_create(systems.values())  # results pick up their systems' new keys on insert
    Result.objects.bulk_create([result for result, _ in results])
    Run.objects.bulk_create([
        Run(result=result, index=_run_index(path, position), path=path)
        for result, entry in results for position, path in enumerate(entry.run_files)
    ])
    runs = Run.objects.filter(result__system__submission=submission).order_by("pk")  # see checks._run_facts
    run_ids = list(runs.values_list("pk", flat=True))
    if not run_ids:
        found = sorted({e.benchmark for e in layout.results})
        raise LayoutError(  # rolls back what was recorded
            "layout.no-benchmarks",
            f"No run logs for a benchmark of {round_.name}: found {', '.join(found) or 'none'}; "
            f"expected results/<system>/<benchmark>/result_N.txt with <benchmark> one of "
            f"{', '.join(b.key for b in round_.benchmarks.all())}.",
        )
    update(submission.pk, submitter=submitter, notes=notes)
    validation = _start_validation(submission, run_ids, "ingest")
    return validation.pk, run_ids
