"""In imported history no check of the portal's own fails a run that mlperf-logging's checker of the ruleset
passes (issue 38, item 3): a sample of real v5.1 logs, as published and edited into the shapes the published
rounds hold (records off the run's clock, a squeezed clock, run_stop at an earlier checkpoint), each judged by
mlperf-logging's own checker and summarizer (tests/summarizer.py) and by check_run of a history round."""

import json
import tarfile

import pytest

from leaderboard.catalogue import rule_catalogue
from leaderboard.catalogue.rounds import ROUNDS_DIR, read_round_file
from submissions.checking.rules import RunContext, check_run

from ...conftest import shared_plain_tar
from ...mllogs import V51_KEYS
from ...summarizer import log_verdict

pytestmark = pytest.mark.shared_rounds

SAMPLE = 4  # logs of distinct benchmarks, the first of the tarball (a few seconds of xz)
MARKER = ":::MLLOG "
BENCHMARKS = {b["key"]: b for b in read_round_file(ROUNDS_DIR / "training-v5.1.toml")["benchmarks"]}


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


@pytest.fixture(scope="module")
def sample() -> dict[str, list[str]]:
    """{bundle path: lines} of SAMPLE real v5.1 run logs of distinct benchmarks."""
    logs: dict[str, list[str]] = {}
    benchmarks = set()
    with tarfile.open(shared_plain_tar("training_v5.1_results.tar.xz"), "r:") as tar:
        for member in tar:
            parts = member.name.split("/")
            if not (member.isfile() and parts[-1].startswith("result_") and "results" in parts):
                continue
            if parts[-2] in BENCHMARKS and parts[-2] not in benchmarks:
                benchmarks.add(parts[-2])
                logs[member.name.lstrip("./")] = (
                    tar.extractfile(member).read().decode().splitlines()
                )
                if len(logs) == SAMPLE:
                    break
    return logs


def record(line: str) -> dict | None:
    at = line.find(MARKER)
    if at < 0:
        return None
    try:
        return json.loads(line[at + len(MARKER) :])
    except ValueError:
        return None


def retimed(lines: list[str], i: int, time_ms) -> None:
    at = lines[i].find(MARKER)
    lines[i] = lines[i][:at] + MARKER + json.dumps({**record(lines[i]), "time_ms": round(time_ms)})


def keyed(lines, key) -> list[int]:
    return [i for i, line in enumerate(lines) if (r := record(line)) and r.get("key") == key]


def evals_off_the_clock(lines):
    """Every eval_accuracy timed when its model was made, three hours before (TPU MiniGo)."""
    lines = list(lines)
    for i in keyed(lines, "eval_accuracy"):
        retimed(lines, i, record(lines[i])["time_ms"] - 3 * 3_600_000)
    return lines


def squeezed(lines, factor=50):
    """The timed region's clock run `factor` times fast: its work done at that multiple of the pace."""
    lines = list(lines)
    (start,), (stop,) = keyed(lines, "run_start")[:1], keyed(lines, "run_stop")[-1:]
    t0 = record(lines[start])["time_ms"]
    for i in range(start + 1, stop + 1):
        if (r := record(lines[i])) is not None and isinstance(r.get("time_ms"), (int, float)):
            retimed(lines, i, t0 + (r["time_ms"] - t0) / factor)
    return lines


def stopped_at_the_eval_before_last(lines):
    """run_stop timed at the eval before the last one (Stable Diffusion's earlier checkpoint)."""
    lines = list(lines)
    evals = keyed(lines, "eval_accuracy")
    (stop,) = keyed(lines, "run_stop")[-1:]
    retimed(lines, stop, record(lines[evals[-2]])["time_ms"])
    return lines


SHAPES = {
    "as published": lambda lines: lines,
    "evals off the clock": evals_off_the_clock,
    "squeezed": squeezed,
    "run_stop at an earlier eval": stopped_at_the_eval_before_last,
}


def judged(tmp_path, rel, lines, history):
    bench = BENCHMARKS[rel.split("/")[-2]]
    path = tmp_path / rel.replace("/", "_")
    path.write_text("\n".join(lines) + "\n")
    ctx = RunContext(
        "5.1.0",
        bench["key"],
        V51_KEYS,
        quality_target=bench.get("quality_target"),
        higher_is_better=bench.get("higher_is_better", True),
        history=history,
    )
    return path, check_run(path, rel, ctx)


def test_in_history_no_check_of_the_portals_own_fails_a_run_the_checker_passes(tmp_path, sample):
    assert len(sample) == SAMPLE
    counted = failed_live = 0
    for rel, real in sample.items():
        for shape, edit in SHAPES.items():
            lines = edit(real)
            path, outcome = judged(tmp_path, rel, lines, history=True)
            own = [f for f in outcome.findings if f.rule in rule_catalogue.PORTAL_OWN_RULES]
            assert all(f.severity != "error" for f in own), (rel, shape, own)
            if not log_verdict(path, "5.1.0").counted:
                continue  # mlperf-logging's summarizer drops the run: so may the portal
            counted += 1
            assert outcome.summary.success, (rel, shape, outcome.summary.failure_reason)
            _, live = judged(tmp_path, rel, lines, history=False)
            failed_live += not live.summary.success
    # The sample has teeth: edited logs that mlperf-logging's checker passes and that a check of the portal's
    # own fails in a live round.
    assert counted >= 3 * SAMPLE and failed_live >= SAMPLE, (counted, failed_live)
