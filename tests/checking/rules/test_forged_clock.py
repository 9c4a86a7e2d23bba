"""A log must agree with itself (issue 19): forged clocks are errors on the run, with the offending line; a
result faster than its accelerators have ever been is flagged for reviewers.

The forged logs are written here: generated valid v5.1 logs (submissions.synthetic.logs) and a real v5.1 log
from the shared round, with their times edited the ways a submitter could edit them.
"""

import json
import math
import tarfile

import pytest
from django.core.management import call_command

from leaderboard.catalogue import accelerators, rule_catalogue
from submissions.checking.rules import RunContext, check_run, check_speed, clock, plausibility
from submissions.synthetic.bundles import SystemSpec, write_bundle
from submissions.synthetic.logs import mllog_run

from ...conftest import shared_plain_tar
from ...mllogs import REL, T0, V51_KEYS

TARGET = 0.72
RGAT = RunContext("5.1.0", "rgat", V51_KEYS, quality_target=TARGET)
CLOCK_ERRORS = set(rule_catalogue.UNTIMED_RULES)


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: most tests here are pure Python."""


# --- reading and editing MLLOG lines, independently of the portal's parser ------------------------------------


def generated(minutes: float = 21.0) -> list[str]:
    """A valid v5.1 R-GAT log whose run takes `minutes`."""
    return mllog_run(
        benchmark="rgat",
        org="ACME",
        division="closed",
        status="onprem",
        platform="1xTEST",
        seed=1,
        start_ms=T0,
        minutes=minutes,
        target=TARGET,
    ).splitlines()


def record(line: str) -> dict | None:
    marker = line.find(":::MLLOG ")
    return json.loads(line[marker + len(":::MLLOG ") :]) if marker >= 0 else None


def with_time(line: str, time_ms) -> str:
    prefix = line[: line.find(":::MLLOG ")]
    return prefix + ":::MLLOG " + json.dumps({**record(line), "time_ms": time_ms})


def lines_of(lines: list[str], key: str) -> list[int]:
    """1-based line numbers of the records with this key."""
    return [n for n, line in enumerate(lines, 1) if (r := record(line)) and r["key"] == key]


def time_of(lines: list[str], n: int):
    return record(lines[n - 1])["time_ms"]


def retimed(lines: list[str], n: int, time_ms) -> list[str]:
    lines = list(lines)
    lines[n - 1] = with_time(lines[n - 1], time_ms)
    return lines


def first_reaching(lines: list[str]) -> int:
    """The line of the first eval_accuracy that reaches the target (higher is better)."""
    return next(
        n for n in lines_of(lines, "eval_accuracy") if record(lines[n - 1])["value"] >= TARGET
    )


def squeezed(lines: list[str], seconds: float) -> list[str]:
    """Every record from run_start to run_stop retimed, in order, into `seconds` after run_start."""
    (start,), (stop,) = lines_of(lines, "run_start"), lines_of(lines, "run_stop")
    t0, t1 = time_of(lines, start), time_of(lines, stop)
    out = list(lines)
    for n in range(start, stop + 1):
        if (r := record(lines[n - 1])) is not None:
            out[n - 1] = with_time(
                lines[n - 1], t0 + round((r["time_ms"] - t0) * seconds * 1000 / (t1 - t0))
            )
    return out


def check(tmp_path, lines, ctx=RGAT):
    path = tmp_path / "result_0.txt"
    path.write_text("\n".join(lines) + "\n")
    return check_run(path, REL, ctx)


def only(findings, rule):
    found = [f for f in findings if f.rule == rule]
    assert len(found) == 1, (
        f"expected one {rule}, got {[(f.rule, f.line, f.message) for f in findings]}"
    )
    return found[0]


def rules(findings, severity="error"):
    return {f.rule for f in findings if f.severity == severity}


# --- the run's own clock --------------------------------------------------------------------------------------


def test_the_generated_log_is_sound_so_each_forgery_below_is_what_is_found(tmp_path):
    outcome = check(tmp_path, generated(minutes=21.0))
    assert rules(outcome.findings) == set() and rules(outcome.findings, "warning") == set()
    assert outcome.summary.success and outcome.summary.time_to_train_s == pytest.approx(21 * 60)


def test_run_stop_moved_to_a_second_after_run_start_leaves_the_evals_outside_the_timed_region(
    tmp_path,
):
    lines = generated()
    (start,), (stop,) = lines_of(lines, "run_start"), lines_of(lines, "run_stop")
    forged = retimed(lines, stop, time_of(lines, start) + 1000)
    outcome = check(tmp_path, forged)

    reach = first_reaching(forged)
    after = only(outcome.findings, "run.record-after-stop")
    assert (after.severity, after.file, after.line) == ("error", REL, reach)
    assert f"line {reach}" in after.message and "1.000 s apart" in after.message and after.hint
    # The first timeline record of the region timed after the new run_stop: the first eval_start.
    outside = next(
        n
        for n in range(start + 1, stop)
        if record(forged[n - 1])["key"] in clock.TIMELINE_KEYS
        and record(forged[n - 1])["time_ms"] > time_of(forged, stop) + 1000
    )
    backwards = only(outcome.findings, "run.clock-backwards")
    assert (backwards.severity, backwards.line) == ("error", outside)
    assert f"(line {stop})" in backwards.message
    early = only(outcome.findings, "run.stop-too-early")
    assert (early.severity, early.line) == ("error", stop)
    # The forged 1 s is not a successful time to train.
    assert outcome.summary.time_to_train_s == pytest.approx(1.0)
    assert not outcome.summary.success and outcome.summary.failure_reason


def test_every_record_squeezed_into_one_second_is_faster_than_any_system_could_go(tmp_path):
    lines = generated()
    forged = squeezed(lines, 1.03)
    outcome = check(tmp_path, forged)
    (stop,) = lines_of(forged, "run_stop")
    early = only(outcome.findings, "run.stop-too-early")
    assert (early.severity, early.file, early.line) == ("error", REL, stop)
    assert "1.030 s after run_start" in early.message and "rgat" in early.message
    assert f"more than {plausibility.RUN_ERROR_MULTIPLE:g}x" in early.message and early.hint
    # Squeezed in order, the clock itself agrees with itself: only the pace gives the forgery away.
    assert rules(outcome.findings) == {"run.stop-too-early"}
    assert not outcome.summary.success


def test_the_pace_rule_leaves_a_fast_but_possible_run_alone(tmp_path):
    # Within RUN_ERROR_MULTIPLE of the fastest step rate published for R-GAT.
    fastest = plausibility.fastest_pace("rgat", "epochs").per_batch.value
    lines = generated()
    (stop,) = lines_of(lines, "run_stop")
    epochs, batch = record(lines[stop - 1])["metadata"]["epoch_num"], 32_768
    seconds = epochs / (fastest * batch) / (plausibility.RUN_ERROR_MULTIPLE / 2)
    outcome = check(tmp_path, squeezed(lines, seconds))
    assert rules(outcome.findings) == set() and outcome.summary.success


def test_run_stop_logged_before_the_evals_that_produced_the_result(tmp_path):
    lines = generated()
    (start,), (stop,) = lines_of(lines, "run_start"), lines_of(lines, "run_stop")
    moved = with_time(lines[stop - 1], time_of(lines, start) + 1000)
    forged = lines[:start] + [moved] + lines[start : stop - 1] + lines[stop:]
    outcome = check(tmp_path, forged)
    after = only(outcome.findings, "run.record-after-stop")
    assert (after.severity, after.line) == ("error", first_reaching(forged))
    assert rules(outcome.findings) == {"run.record-after-stop"}
    assert not outcome.summary.success


def test_without_a_target_to_judge_by_an_eval_must_still_lie_in_the_timed_region(tmp_path):
    lines = [line for line in generated() if "target_accuracy" not in line]
    (start,), (stop,) = lines_of(lines, "run_start"), lines_of(lines, "run_stop")
    moved = with_time(lines[stop - 1], time_of(lines, start) + 1000)
    forged = lines[:start] + [moved] + lines[start : stop - 1] + lines[stop:]
    ctx = RunContext("5.1.0", "rgat", V51_KEYS)  # no quality target
    after = only(check(tmp_path, forged, ctx).findings, "run.record-after-stop")
    assert after.line == lines_of(forged, "eval_accuracy")[0]
    assert "No eval_accuracy lies between run_start and run_stop" in after.message


def test_run_start_moved_to_just_before_run_stop(tmp_path):
    lines = generated()
    (start,), (stop,) = lines_of(lines, "run_start"), lines_of(lines, "run_stop")
    moved = with_time(lines[start - 1], time_of(lines, stop) - 1000)
    forged = lines[: start - 1] + lines[start : stop - 1] + [moved] + lines[stop - 1 :]
    outcome = check(tmp_path, forged)
    before = only(outcome.findings, "run.record-before-start")
    assert (before.severity, before.line) == ("error", first_reaching(forged))
    assert rules(outcome.findings) == {"run.record-before-start"} and not outcome.summary.success


def test_run_start_retimed_to_just_before_run_stop(tmp_path):
    lines = generated()
    (start,), (stop,) = lines_of(lines, "run_start"), lines_of(lines, "run_stop")
    forged = retimed(lines, start, time_of(lines, stop) - 1000)
    outcome = check(tmp_path, forged)
    backwards = only(outcome.findings, "run.clock-backwards")
    first_in_region = next(
        n for n in range(start + 1, stop) if record(forged[n - 1])["key"] in clock.TIMELINE_KEYS
    )
    assert (backwards.severity, backwards.line) == ("error", first_in_region)
    assert f"before run_start (line {start})" in backwards.message
    assert "run.stop-too-early" in rules(outcome.findings)


def test_an_eval_still_running_when_the_target_was_reached_may_end_after_run_stop(tmp_path):
    """Google's v0.6 TPU SSD logs finish an eval already started after run_stop; the eval that reached the
    target lies inside the timed region, so the time stands."""
    lines = generated()
    (stop,) = lines_of(lines, "run_stop")
    late = with_time(lines[lines_of(lines, "eval_accuracy")[-1] - 1], time_of(lines, stop) + 20_000)
    outcome = check(tmp_path, lines + [late])
    assert rules(outcome.findings) & CLOCK_ERRORS == set() and outcome.summary.success


def test_a_time_that_is_not_a_number_is_an_error_at_its_line(tmp_path):
    lines = generated()
    middle = lines_of(lines, "eval_accuracy")[2]
    outcome = check(tmp_path, retimed(lines, middle, math.nan))
    f = only(outcome.findings, "run.clock-not-finite")
    assert (f.severity, f.line) == ("error", middle) and "nan" in f.message


def test_an_infinite_run_stop_gives_no_time_to_train(tmp_path):
    lines = generated()
    (stop,) = lines_of(lines, "run_stop")
    outcome = check(tmp_path, retimed(lines, stop, math.inf))
    f = only(outcome.findings, "run.clock-not-finite")
    assert (f.severity, f.line) == ("error", stop)
    assert outcome.summary.time_to_train_s is None and not outcome.summary.success
    assert "not a finite number" in outcome.summary.failure_reason


def test_a_record_days_away_from_its_neighbours_is_off_the_clock(tmp_path):
    lines = generated()
    middle = lines_of(lines, "eval_stop")[3]
    outcome = check(tmp_path, retimed(lines, middle, time_of(lines, middle) + 3 * 86_400_000))
    f = only(outcome.findings, "run.clock-outlier")
    assert (f.severity, f.line) == ("error", middle) and "3.0 days" in f.message
    assert "run.clock-backwards" not in rules(
        outcome.findings
    )  # the one record is named, not all after it


def test_a_setting_logged_with_a_time_of_zero_is_not_judged(tmp_path):
    """Intel's v0.5 logs time some settings 0; only the records that time the run are judged."""
    lines = generated()
    (seed,) = lines_of(lines, "seed")
    outcome = check(tmp_path, retimed(lines, seed, 0))
    assert rules(outcome.findings) & CLOCK_ERRORS == set() and outcome.summary.success


def test_processes_writing_together_may_interleave_within_the_allowance(tmp_path):
    lines = generated()
    n, before = (
        lines_of(lines, "eval_start")[4],
        lines_of(lines, "eval_stop")[3],
    )  # before: the record it follows
    assert before < n
    earlier = time_of(lines, before) - round(clock.CLOCK_SLACK_S * 1000 / 2)
    outcome = check(tmp_path, retimed(lines, n, earlier))
    assert [f for f in outcome.findings if f.rule.startswith("run.clock")] == []


def test_a_clock_going_back_within_the_timed_region_is_a_warning(tmp_path):
    """Intel's v0.5 ResNet logs jump back 40 minutes between epochs, every record still between run_start and
    run_stop: the time to train stands, reviewers are told."""
    lines = generated()
    n, before = lines_of(lines, "eval_start")[4], lines_of(lines, "eval_stop")[3]
    assert before < n
    outcome = check(tmp_path, retimed(lines, n, time_of(lines, before) - 30_000))
    f = only(outcome.findings, "run.clock-unordered")
    assert (f.severity, f.line) == ("warning", n)
    assert rules(outcome.findings) == set() and outcome.summary.success


# --- a real v5.1 log, forged -----------------------------------------------------------------------------------

REAL_LOG = "./Dell/results/1xXE9680x8H200-SXM-141GB/rgat/result_0.txt"


@pytest.fixture(scope="module")
def real_lines():
    with tarfile.open(shared_plain_tar("training_v5.1_results.tar.xz"), "r:") as tar:
        for member in tar:
            if member.name == REAL_LOG:
                return tar.extractfile(member).read().decode().splitlines()
    pytest.fail(f"{REAL_LOG} is not in the tarball")


@pytest.mark.shared_rounds
def test_a_real_v51_log_passes_the_clock_rules(tmp_path, real_lines):
    outcome = check(tmp_path, real_lines)
    assert [
        f for f in outcome.findings if f.rule in CLOCK_ERRORS or f.rule == "run.clock-unordered"
    ] == []
    assert outcome.summary.success


@pytest.mark.shared_rounds
def test_a_real_v51_log_with_run_stop_a_second_after_run_start(tmp_path, real_lines):
    (start,), (stop,) = lines_of(real_lines, "run_start"), lines_of(real_lines, "run_stop")
    real_seconds = (time_of(real_lines, stop) - time_of(real_lines, start)) / 1000
    forged = retimed(real_lines, stop, time_of(real_lines, start) + 1000)
    outcome = check(tmp_path, forged)
    assert only(outcome.findings, "run.record-after-stop").line == first_reaching(forged)
    assert only(outcome.findings, "run.stop-too-early").line == stop
    assert "run.clock-backwards" in rules(outcome.findings)
    assert real_seconds > 60 and not outcome.summary.success


@pytest.mark.shared_rounds
def test_a_real_v51_log_squeezed_into_a_second(tmp_path, real_lines):
    forged = squeezed(real_lines, 1.03)
    outcome = check(tmp_path, forged)
    (stop,) = lines_of(forged, "run_stop")
    assert only(outcome.findings, "run.stop-too-early").line == stop
    assert not outcome.summary.success


# --- how fast a result may be ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, family",
    [
        ("NVIDIA Blackwell GPU (GB200)", "NVIDIA GB200"),
        ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "NVIDIA B200"),
        ("NVIDIA Blackwell Ultra GPU (GB300)", "NVIDIA GB300"),
        ("NVIDIA H200-SXM5-141GB", "NVIDIA H200"),
        ("AMD Instinct MI325X 256GB HBM3E DLC", "AMD MI325X"),
        ("Tesla V100-SXM3-32GB-H", "NVIDIA V100"),
        ("tpuv2-512", "Google TPU v2"),
        ("tpu-v3", "Google TPU v3"),
        ("Intel Xeon Platinum 8260L", None),
        ("", None),
    ],
)
def test_accelerator_names_of_the_published_rounds_map_to_their_family(name, family):
    assert plausibility.family_of(name) == family


def test_the_table_says_where_each_figure_comes_from():
    table = plausibility._table()
    for bench, units in table["pace"].items():
        for unit, row in units.items():
            assert row["per_second"] > 0 and row["source"].startswith("training-v"), (bench, unit)
    families = {name for name, _ in accelerators.families()}
    for bench, rows in table["accelerator_minutes"].items():
        assert set(rows) <= families, bench
        assert all(row["minutes"] > 0 and "min on" in row["source"] for row in rows.values()), bench


def test_a_result_several_times_faster_per_accelerator_than_its_family_ever_was_is_flagged():
    best = plausibility.fewest_accelerator_minutes("rgat", "NVIDIA B200")
    model, count = "NVIDIA Blackwell GPU (B200-SXM-180GB)", 8
    too_fast = best.value / (plausibility.RESULT_WARNING_MULTIPLE * 1.5) / count * 60  # seconds
    [f] = check_speed("rgat", too_fast, model, count, "ACME/results/sys/rgat")
    assert (f.severity, f.rule, f.file) == (
        "warning",
        "result.implausibly-fast",
        "ACME/results/sys/rgat",
    )
    assert (
        "4.5x faster per accelerator" in f.message
        and f"{best.value:,.1f} accelerator-minutes" in f.message
    )
    assert best.source in f.message and f.hint
    fast_but_possible = best.value / (plausibility.RESULT_WARNING_MULTIPLE * 0.9) / count * 60
    assert check_speed("rgat", fast_but_possible, model, count) == []


def test_a_result_without_a_family_or_a_score_is_not_compared():
    assert check_speed("rgat", 1.0, "Acme Tensor Engine", 8) == []
    assert check_speed("rgat", None, "NVIDIA B200-SXM-180GB", 8) == []
    assert check_speed("rgat", 1.0, "NVIDIA B200-SXM-180GB", None) == []
    assert check_speed("no_such_benchmark", 1.0, "NVIDIA B200-SXM-180GB", 8) == []


# --- through the pipeline ----------------------------------------------------------------------------------------

TARGETS = {"rgat": TARGET}


def forge(path, forgery) -> int:
    """Rewrite the log at path with forgery(lines); return the forged log's run_stop line."""
    lines = forgery(path.read_text().splitlines())
    path.write_text("\n".join(lines) + "\n")
    (stop,) = lines_of(lines, "run_stop")
    return stop


def stop_a_second_after_start(lines):
    (start,), (stop,) = lines_of(lines, "run_start"), lines_of(lines, "run_stop")
    return retimed(lines, stop, time_of(lines, start) + 1000)


def ingest(path):
    from submissions.models import Submission

    call_command("ingest", str(path), "--round", "training-v5.1", "--wait")
    return Submission.objects.order_by("-pk").first()


@pytest.fixture
def pipeline(settings, tmp_path, rounds, eager):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_forged_runs_end_as_errors_and_the_result_has_no_score(pipeline, tmp_path):
    from leaderboard.models import Result, Run
    from submissions.models import Finding, Submission

    minutes = [20.0 + k for k in range(10)]
    root = write_bundle(
        tmp_path / "src", "Acme", [SystemSpec("alpha", results={"rgat": minutes})], TARGETS
    )
    folder = root / "results" / "alpha" / "rgat"
    stops = {
        n: forge(folder / f"result_{n}.txt", lambda lines: squeezed(lines, 1.03)) for n in (0, 1)
    }
    with pytest.raises(Exception, match="did not pass"):  # --wait fails: the submission is invalid
        ingest(root)
    submission = Submission.objects.get()
    assert submission.status == Submission.Status.INVALID
    for n, stop in stops.items():
        run = Run.objects.get(index=n)
        f = Finding.objects.get(run=run, rule="run.stop-too-early")
        assert (f.severity, f.line, f.file) == (
            "error",
            stop,
            f"Acme/results/alpha/rgat/result_{n}.txt",
        )
        assert not run.success and run.time_to_train_s == pytest.approx(1.03)
    result = Result.objects.get()
    assert result.score_s is None and "2 of 10 runs failed" in result.score_message


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_one_forged_run_counts_as_failed_and_its_time_is_not_in_the_score(pipeline, tmp_path):
    from leaderboard.models import Result, Run
    from submissions.checking import scoring
    from submissions.models import Finding

    minutes = [20.0 + k for k in range(10)]
    root = write_bundle(
        tmp_path / "src", "Acme", [SystemSpec("alpha", results={"rgat": minutes})], TARGETS
    )
    forge(root / "results" / "alpha" / "rgat" / "result_0.txt", stop_a_second_after_start)
    ingest(root)
    forged = Run.objects.get(index=0)
    assert not forged.success and forged.dropped
    # Olympic scoring tolerates one failed run: its errors stay on the run, as warnings saying so.
    f = Finding.objects.get(run=forged, rule="run.record-after-stop")
    assert f.severity == "warning" and "Tolerated" in f.hint and f.line is not None
    expected = scoring.olympic([None] + [m * 60 for m in minutes[1:]], 10).seconds
    with_forged_time = scoring.olympic([1.0] + [m * 60 for m in minutes[1:]], 10).seconds
    result = Result.objects.get()
    assert result.score_s == pytest.approx(expected * result.scaling_factor, rel=1e-6)
    assert result.score_s != pytest.approx(with_forged_time * result.scaling_factor, rel=1e-3)


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_result_faster_than_its_accelerators_ever_were_is_flagged_for_reviewers(
    pipeline, tmp_path
):
    from leaderboard.models import Result
    from submissions.models import Finding, Submission

    spec = SystemSpec(
        "swift", accelerator_model="NVIDIA B200-SXM-180GB", results={"rgat": [1.0] * 10}
    )
    best = plausibility.fewest_accelerator_minutes("rgat", "NVIDIA B200")
    assert (
        best.value / (1.0 * spec.accelerators_per_node) > plausibility.RESULT_WARNING_MULTIPLE
    )  # the premise
    submission = ingest(write_bundle(tmp_path / "src", "Acme", [spec], TARGETS))
    assert submission.status == Submission.Status.VALID, (
        submission.message
    )  # a warning does not block
    result = Result.objects.get()
    f = Finding.objects.get(rule="result.implausibly-fast")
    assert (f.severity, f.result, f.run) == ("warning", result, None)
    assert f"{result.score_s / 60:,.2f} minutes on 8 x NVIDIA B200-SXM-180GB" in f.message
