"""Open a bundle (in place, or unpacked), record its systems, results and runs, and start a validation."""

from functools import partial

from django.db import transaction
from django.db.models import Max, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from accounts.models import Organisation
from leaderboard.catalogue import rule_catalogue
from leaderboard.catalogue.organisations import lookalike_key, organisation_of
from leaderboard.models import Benchmark, Result, Run, Submitter, System
from submissions.models import Finding, Submission, Validation

from .. import leases
from ..budget import is_stop
from ..bundles import BundleError, LayoutError, detect
from ..bundles.layout import MAX_JSON_BYTES, read_scaling_factor
from ..energy import has_power_track, power_of_runs
from ..rules import bundle as rules
from ..rules.bundle import log_placement, no_run_log, read_crashed
from ..systems import fields_of
from .common import Status, clear_work, fail, is_disk_full, open_submission, room_to_open, update


def ingest(submission_id: int, owner: str | None = None) -> tuple[int | None, list[int]]:
    """Open and record the bundle; return (validation id, run ids to check). `owner`: the task claiming the
    step (leases.claim); nothing is done where another holds it. The first claim is attempt 1: a lost
    attempt is counted by the sweeper, where it finds it lost."""
    owner = owner or leases.new_owner()
    if not leases.claim(
        submission_id,
        owner,
        Status.INGESTING,
        start_from=[Status.RECEIVED, Status.INGESTING],
        attempts=Greatest("attempts", Value(1)),
    ):
        return None, []
    try:
        return _ingest(submission_id)
    finally:
        leases.release(submission_id, owner)


def _ingest(submission_id: int) -> tuple[int | None, list[int]]:
    submission = Submission.objects.select_related("round", "organisation").get(pk=submission_id)
    try:
        with room_to_open(submission):
            files = open_submission(submission)
        if _recorded(submission_id):  # by an earlier pass, from the same bytes: checked again
            return _check_again(submission, "taken in again")
        layout = detect(files)
        if holder := other_organisation(submission, layout.submitter):
            refuse(
                submission,
                rules.other_organisation(
                    layout.submitter, layout.root, holder, submission.organisation.name
                ),
            )
            return None, []
        return _record(submission, layout, files)
    except (BundleError, LayoutError) as error:
        fail(submission_id, str(error), error.rule)
        return None, []


def over_budget(submission_id: int, over) -> None:
    """Opening and recording the bundle passed a limit of its step's budget (over: budget.OverBudget): the
    submission fails with the finding that names it, on the bundle, the file that was being read."""
    submission = Submission.objects.select_related("round").get(pk=submission_id)
    refuse(submission, rules.over_budget(submission.original_name or submission.bundle.name, over))


def wait_for_disk(submission_id: int) -> bool:
    """The disk was full (or had no room for the bundle): the submission waits, not counted as an attempt,
    and its ingest is queued again until there is room. A full disk is the site's fault and passes. False
    where the submission was not being taken in (a re-validation, which put it back as it was)."""
    clear_work(submission_id)
    return bool(
        update(
            submission_id,
            only_if={"status__in": [Status.RECEIVED, Status.INGESTING]},
            status=Status.RECEIVED,
            message="Waiting for disk space on the portal. The bundle is stored; checking starts by itself "
            "once there is room. There is no need to upload again.",
        )
    )


def other_organisation(submission: Submission, submitter: str) -> str | None:
    """The name of the other organisation that the bundle's submitter's name is, as a reader would read it
    (lookalike_key: case, spaces, punctuation and look-alike letters ignored): a registered one, or one
    already on the leaderboard under that name (imported history, or another organisation's results: an
    organisation with no account here). None where the bundle may be recorded for the organisation it was
    uploaded for. A member uploads for their own organisation only, and what goes public is filed under
    the bundle's submitter. A name nobody holds yet is let through: the organisations' names need not
    cover every spelling of their submitters'."""
    own = submission.organisation
    if own is None:
        return None
    claimed = {lookalike_key(submitter), lookalike_key(organisation_of(submitter))}
    if lookalike_key(own.name) in claimed:
        return None
    return next((name for name in _names_of_others(own) if lookalike_key(name) in claimed), None)


def refuse(submission: Submission, found) -> None:
    """The bundle is not recorded, for the rule outcome `found` (rules.Finding): the submission fails, and
    a validation holds the finding (file, rule, what to do) for its report, as any other rule's."""
    now = timezone.now()
    with transaction.atomic():
        validation = Validation.objects.create(
            submission=submission,
            number=_next_number(submission),
            reason="ingest",
            status=Validation.Status.DONE,
            verdict="invalid",
            errors=1,
            finished_at=now,
        )
        Finding.from_rule(found, validation=validation).save()
        fail(submission.pk, f"{found.message} {found.hint}", found.rule)


def _names_of_others(own: Organisation):
    """The names of every organisation but `own`: the registered ones, then the submitters of results
    not of `own` (imported rounds, other organisations) with the organisations they belong to."""
    yield from Organisation.objects.exclude(pk=own.pk).values_list("name", flat=True)
    others = (
        Submitter.objects.exclude(systems__submission__organisation=own)
        .filter(systems__isnull=False)
        .values_list("name", "organisation")
        .distinct()
    )
    for name, organisation in others.iterator():
        yield name
        yield organisation


def revalidate(
    submission_id: int, reason: str, user=None, owner: str | None = None
) -> tuple[int | None, list[int]]:
    """Check a final submission again (e.g. after a rules fix); findings of earlier passes are kept. A failed
    one whose bundle is kept (a worker kept dying, a fault since mended) is taken in again from the start, as
    its failure message promises. `owner`: the task claiming the step, as ingest's."""
    owner = owner or leases.new_owner()
    final = [Status.VALID, Status.INVALID, Status.PUBLISHED]
    submission = Submission.objects.select_related("round").get(pk=submission_id)
    if submission.status == Status.FAILED:
        if submission.bundle and update(
            submission_id,
            only_if={"status": Status.FAILED, "bundle": submission.bundle.name},
            status=Status.RECEIVED,
            message="",
            rule="",
            attempts=0,
            finished_at=None,
            queue_pending=False,
        ):
            return ingest(submission_id, owner)
        return None, []
    was_published = submission.status == Status.PUBLISHED
    # this pass is its first attempt
    if not leases.claim(submission_id, owner, Status.INGESTING, start_from=final, attempts=1):
        return None, []
    try:
        return _revalidate(submission, reason, user, was_published)
    finally:
        leases.release(submission_id, owner)


def _revalidate(submission, reason: str, user, was_published: bool) -> tuple[int | None, list[int]]:
    submission_id = submission.pk
    try:
        with room_to_open(submission):
            open_submission(submission)
    except (BundleError, LayoutError, OSError) as error:
        if is_disk_full(error):  # the site's fault, which passes: back as it was, tried again later
            clear_work(submission_id)
            update(submission_id, only_if={"status": Status.INGESTING}, status=submission.status)
            raise
        fail(
            submission_id,
            f"Re-validation could not open the bundle: {error}",
            getattr(error, "rule", ""),
        )
        return None, []
    with transaction.atomic():
        checked = _check_again(submission, reason, user)
        if was_published:
            update(submission_id, publish_when_valid=True)
    return checked


def _recorded(submission_id: int) -> bool:
    """Whether an earlier pass recorded the submission's systems, results and runs (in one transaction:
    all or none). Its bundle is the same bytes (a submission keeps its sha256; uploading them again starts
    a failed one again), so they are checked again as they are: recording them anew deleted the runs of
    the earlier validations, and with them those validations' run checks and findings."""
    return Run.objects.filter(result__system__submission_id=submission_id).exists()


@transaction.atomic
def _check_again(submission: Submission, reason: str, user=None) -> tuple[int, list[int]]:
    """A new validation over the runs recorded, with what ingest found about the logs' names and places
    carried from the latest one; returns (validation id, run ids to check)."""
    run_ids = list(
        Run.objects.filter(result__system__submission_id=submission.pk)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    earlier = submission.validations.order_by("-number").first()
    validation = _start_validation(submission, run_ids, reason, user)
    if earlier is not None:
        _carry_bundle_findings(earlier, validation)
    return validation.pk, run_ids


def _start_validation(
    submission: Submission, run_ids: list[int], reason: str, user=None
) -> Validation:
    validation = Validation.objects.create(
        submission=submission, number=_next_number(submission), reason=reason, requested_by=user
    )
    update(submission.pk, status=Status.CHECKING, runs_total=len(run_ids), runs_checked=0)
    return validation


def _next_number(submission: Submission) -> int:
    """The number of the submission's next validation: one past its latest."""
    return (submission.validations.aggregate(n=Max("number"))["n"] or 0) + 1


def _benchmarks_by_folder(round_) -> dict[str, Benchmark]:
    by_name = {}
    for bench in round_.benchmarks.all():
        for name in [bench.key, *bench.aliases]:
            by_name[name.lower()] = bench
    return by_name


def _claimed_scaling_factor(files, entry, notes: list[str], problems: list) -> float | None:
    """What the result's scaling.json says, for comparison with the factor the portal computes."""
    name = next((f for f in entry.extra_files if f.endswith("/scaling.json")), None)
    if not name:
        return None
    try:
        return read_scaling_factor(files.read_bytes(name, MAX_JSON_BYTES), name, notes, problems)
    except OSError as error:
        notes.append(f"{name}: not read ({type(error).__name__}).")
    except Exception as error:  # a fault of ours: a finding on the file, not a failed submission
        if is_stop(error):  # out of memory: the step's budget says so
            raise
        problems.append(read_crashed(name, error))
    return None


def _system_fields(entry, problems: list) -> dict:
    """The System table's fields from the description (fields_of), or none where reading it failed."""
    try:
        return fields_of(entry.description, entry.description_format)
    except (
        Exception
    ) as error:  # a fault of ours: a finding on the description, the system is still recorded
        problems.append(read_crashed(entry.description_path or entry.name, error))
        return fields_of({}, entry.description_format)


def system_key(name: str) -> str:
    """A system's key is one URL segment: nested v0.5 names keep their parts, joined by '~'."""
    return name.strip("/").replace("/", "~")


def _bundle_findings(results: list, systems: dict, problems: list, round_) -> list:
    """The layout's findings: logs read though named or placed otherwise, result folders with no log, and files
    that could not be read (problems: rules.Finding), each on its result or system where it belongs to one."""
    found = []  # (Result, Run or None, rules.Finding)
    for result, entry, runs in results:
        for run in runs:
            found.append(
                (
                    result,
                    run,
                    log_placement(run.path, run.index, entry.log_folder, result.benchmark.key),
                )
            )
        if not runs:
            found.append(
                (
                    result,
                    None,
                    no_run_log(entry.path, entry.log_folder, result.benchmark.key, entry.no_logs),
                )
            )
    rows = [
        Finding.from_rule(
            f,
            result=result,
            run=run,
            system_key=result.system.key,
            benchmark=result.benchmark.key,
            advisory=round_.history,
        )
        for result, run, f in found
        if f is not None
    ]
    described = {
        system.description_path: system for system in systems.values() if system.description_path
    }
    for f in problems:
        result = next((r for r, entry, _ in results if f.file.startswith(entry.path + "/")), None)
        system = result.system if result is not None else described.get(f.file)
        rows.append(
            Finding.from_rule(
                f,
                result=result,
                system_key=system.key if system else "",
                benchmark=result.benchmark.key if result else "",
                advisory=round_.history,
            )
        )
    return rows


def _carry_bundle_findings(earlier: Validation, validation: Validation) -> None:
    # What ingest found about the bundle's files: a re-validation does not read them again.
    rows = list(earlier.findings.filter(rule__in=rule_catalogue.INGEST_RULES))
    for row in rows:
        row.pk, row.validation = None, validation
    Finding.objects.bulk_create(rows)


def _merge(entries: list) -> list:
    """Entries that the round reads as one benchmark of one system (a folder and logs naming it): one entry."""
    merged = {}
    for key, entry in entries:
        if key not in merged:
            merged[key] = entry
            continue
        into = merged[key]
        into.run_files += entry.run_files
        into.misplaced += entry.misplaced
        into.extra_files += entry.extra_files
        into.run_indices = []
        into.__post_init__()  # indices for the runs together, unique
        numbered = sorted(zip(into.run_indices, into.run_files))
        into.run_indices, into.run_files = [n for n, _ in numbered], [p for _, p in numbered]
        into.no_logs = "" if into.run_files else into.no_logs
        into.power_files = {**into.power_files, **entry.power_files}
    return list(merged.values())


@transaction.atomic
def _record(submission: Submission, layout, files) -> tuple[int, list[int]]:
    """Record the bundle's systems, results and runs (three INSERTs however large the bundle), start its
    validation with the findings of reading it; returns the validation and the runs to check."""
    round_ = submission.round
    notes = list(layout.notes)
    problems = list(layout.problems)  # rules.Finding about files that could not be read
    submitter, _ = Submitter.objects.get_or_create(name=layout.submitter)
    new_system = partial(System, submission=submission, round=round_, submitter=submitter)
    systems = _described_systems(layout, new_system, problems)
    entries = _entries_of_the_round(layout, _benchmarks_by_folder(round_), round_, notes)
    results = _results(entries, systems, new_system, round_, files, notes, problems)
    System.objects.bulk_create(
        systems.values()
    )  # results pick up their systems' new keys on insert
    Result.objects.bulk_create([result for result, _ in results])
    recorded = _runs(results, notes)
    Run.objects.bulk_create([run for _, _, runs in recorded for run in runs])
    runs = Run.objects.filter(result__system__submission=submission).order_by(
        "pk"
    )  # see checks._run_facts
    run_ids = list(runs.values_list("pk", flat=True))
    if not run_ids:  # nothing in the bundle could be read: the submission fails as a whole
        raise _no_run_logs(layout, round_)  # rolls back what was recorded
    update(submission.pk, submitter=submitter, notes=notes)
    validation = _start_validation(submission, run_ids, "ingest")
    findings = _bundle_findings(recorded, systems, problems, round_)
    for finding in findings:
        finding.validation = validation
    Finding.objects.bulk_create(findings)
    return validation.pk, run_ids


def _described_systems(layout, new_system, problems: list) -> dict[str, System]:
    """A System (not yet saved) for each description in the bundle, by the name its results use."""
    systems = {}
    for entry in layout.systems:
        fields = _system_fields(entry, problems)
        fields["name"] = fields["name"] or entry.name
        systems[entry.name] = new_system(
            key=system_key(entry.name),
            description=entry.description,
            description_path=entry.description_path or "",
            **fields,
        )
    return systems


def _entries_of_the_round(layout, benchmarks: dict, round_, notes: list[str]) -> list:
    """The bundle's result folders of the round's benchmarks, merged where one result is split in
    several; a folder of another benchmark is ignored, with a note."""
    known = []
    for entry in layout.results:
        bench = benchmarks.get(entry.benchmark.lower())
        if bench is None:
            notes.append(
                f"{entry.path}: '{entry.benchmark}' is not a benchmark of {round_.name}; ignored."
            )
            continue
        known.append(((entry.system, bench.pk), entry))
    return [(entry, benchmarks[entry.benchmark.lower()]) for entry in _merge(known)]


def _results(
    entries, systems: dict, new_system, round_, files, notes: list, problems: list
) -> list:
    """A Result (not yet saved) for each entry, with its layout entry; a system with results but no
    description is made, with a note."""
    results = []
    for entry, bench in entries:
        if entry.system not in systems:
            notes.append(f"{entry.path}: no description for system '{entry.system}'.")
            systems[entry.system] = new_system(key=system_key(entry.system), name=entry.system)
        power = has_power_track(round_.ruleset) and bool(entry.power_files)
        result = Result(
            system=systems[entry.system],
            benchmark=bench,
            path=entry.path,
            power_result=power,
            score_message="" if entry.run_files else f"No run log found: {entry.no_logs}"[:500],
            claimed_scaling_factor=_claimed_scaling_factor(files, entry, notes, problems),
        )
        results.append((result, entry))
    return results


def _runs(results: list, notes: list[str]) -> list:
    """The Runs (not yet saved) of each result, with their power logs: (result, entry, runs). Power
    logs of no run log are ignored, with a note."""
    recorded = []
    for result, entry in results:
        power, unmatched = power_of_runs(
            entry.power_files if result.power_result else {}, entry.run_files
        )
        notes += [
            f"{entry.path}/power/{name}/: power logs of no run log; ignored." for name in unmatched
        ]
        runs = [
            Run(result=result, index=index, path=path, power_files=files)
            for index, path, files in zip(entry.run_indices, entry.run_files, power)
        ]
        recorded.append((result, entry, runs))
    return recorded


def _no_run_logs(layout, round_) -> LayoutError:
    """Why a bundle in which no run log of the round's benchmarks could be read fails as a whole."""
    found = sorted({e.benchmark for e in layout.results})
    why = "".join(f" {e.path}: {e.no_logs}" for e in [e for e in layout.results if e.no_logs][:3])
    return LayoutError(
        rule_catalogue.LAYOUT_NO_BENCHMARKS,
        f"No run logs for a benchmark of {round_.name}: found {', '.join(found) or 'none'}; "
        f"expected results/<system>/<benchmark>/result_N.txt with <benchmark> one of "
        f"{', '.join(b.key for b in round_.benchmarks.all())}.{why}",
    )
