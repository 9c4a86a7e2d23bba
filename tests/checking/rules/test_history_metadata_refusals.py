"""In imported history a run that today's mlperf-logging checker refuses only for how its metadata is logged counts,
with the checker's complaint beside the score; a run it refuses for its time or convergence stays refused, and in
a live round every one of them is refused (issue 38, item 6).

Real published result folders of the shared rounds (v1.0 RNN-T, v4.0 BERT, v5.1's first result), edited the ways
the published record holds: weights_initialization dropped (v1.0's rules want its tensors), opt_lamb_epsilon
logged as opt_epsilon (v4.0's BERT rules want the former), a submission_* key logged twice with two values. Each
edit is judged by mlperf-logging's own checker (tests/summarizer.py), run here, and by check_run; the score of
the edited folder in history is the olympic mean mlperf-logging's scoring function gives the unedited one."""

import json
import tarfile
from pathlib import Path

import pytest

from leaderboard.catalogue.rounds import ROUNDS_DIR, read_round_file
from submissions.checking import scoring
from submissions.checking.rules import RunContext, check_run
from submissions.checking.rules.mlperf import compliance

from ...conftest import shared_plain_tar
from ...summarizer import log_verdict, score_folder

pytestmark = pytest.mark.shared_rounds

MARKER = ":::MLLOG "
# (tarball, round file, benchmark folder): the first such result folder of the tarball, every run of it.
FOLDERS = {
    "v1.0 rnnt": ("training_v1.0_results.tar.xz", "training-v1.0.toml", "rnnt"),
    "v4.0 bert": ("training_v4.0_results.tar.xz", "training-v4.0.toml", "bert"),
    "v5.1 first": ("training_v5.1_results.tar.xz", "training-v5.1.toml", None),
}


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


def first_result_folder(tarball: str, benchmark: str | None, into: Path) -> Path:
    """Unpack the runs (result_*.txt) of the tarball's first result folder of `benchmark` (any, if None)."""
    folder = None
    with tarfile.open(shared_plain_tar(tarball), "r:") as tar:
        for member in tar:
            parts = member.name.lstrip("./").split("/")
            is_run = member.isfile() and parts[-1].startswith("result_") and "results" in parts
            if not is_run or (benchmark is not None and parts[-2] != benchmark):
                if folder is not None and member.isfile() and "/".join(parts[:-1]) != folder:
                    break
                continue
            if folder is None:
                folder = "/".join(parts[:-1])
            elif "/".join(parts[:-1]) != folder:
                break
            target = into / member.name.lstrip("./")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
    return into / folder


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("published")
    return {
        name: first_result_folder(t, b, root / name.replace(" ", "_"))
        for name, (t, _, b) in FOLDERS.items()
    }


def round_of(name: str) -> dict:
    return read_round_file(ROUNDS_DIR / FOLDERS[name][1])


def record(line: str) -> dict | None:
    at = line.find(MARKER)
    if at < 0:
        return None
    try:
        return json.loads(line[at + len(MARKER) :])
    except ValueError:
        return None


def rewritten(line: str, **changes) -> str:
    return line[: line.find(MARKER)] + MARKER + json.dumps({**record(line), **changes})


def keyed(lines: list[str], key: str) -> list[int]:
    return [i for i, line in enumerate(lines) if (r := record(line)) and r.get("key") == key]


# --- the edits: metadata only ---------------------------------------------------------------------------------


def without_weights_initialization(lines):
    drop = set(keyed(lines, "weights_initialization"))
    assert drop, "the published log names the tensors it initialised"
    return [line for i, line in enumerate(lines) if i not in drop]


def opt_epsilon(lines):
    (i,) = keyed(lines, "opt_lamb_epsilon")
    return [*lines[:i], rewritten(lines[i], key="opt_epsilon"), *lines[i + 1 :]]


def submission_platform_twice(lines):
    (i,) = keyed(lines, "submission_platform")
    other = rewritten(lines[i], value=f"{record(lines[i])['value']}-node1")
    return [*lines[: i + 1], other, *lines[i + 1 :]]


# --- the edits: time and convergence ---------------------------------------------------------------------------


def aborted(lines):
    (i,) = keyed(lines, "run_stop")
    r = record(lines[i])
    return [
        *lines[:i],
        rewritten(lines[i], metadata={**r["metadata"], "status": "aborted"}),
        *lines[i + 1 :],
    ]


def short_of_the_target(lines):
    """The evals that reach the target gone: the last eval logged falls short of it."""
    evals = keyed(lines, "eval_accuracy")
    return [line for i, line in enumerate(lines) if i != evals[-1]]


METADATA = {
    "v1.0 rnnt": without_weights_initialization,
    "v4.0 bert": opt_epsilon,
    "v5.1 first": submission_platform_twice,
}


def context(name: str, folder: Path, history: bool) -> RunContext:
    spec = round_of(name)
    benchmarks = {b["key"]: b for b in spec["benchmarks"]}
    bench = benchmarks[folder.name]
    return RunContext(
        spec["ruleset"],
        bench["key"],
        frozenset(benchmarks),
        quality_target=bench.get("quality_target"),
        higher_is_better=bench.get("higher_is_better", True),
        history=history,
    )


def edited_folder(folder: Path, into: Path, edit) -> Path:
    out = into / folder.name
    out.mkdir(parents=True)
    for run in sorted(folder.glob("result_*.txt")):
        (out / run.name).write_text("\n".join(edit(run.read_text().splitlines())) + "\n")
    return out


def runs(folder: Path) -> list[Path]:
    return sorted(folder.glob("result_*.txt"), key=lambda p: int(p.stem.split("_")[1]))


def test_metadata_only_reads_the_checkers_message_shapes():
    assert compliance.metadata_only(
        "Required EXACTLY_ONE occurrence of 'opt_lamb_epsilon' but found 0"
    )
    assert compliance.metadata_only(
        "Required EXACTLY_ONE occurrence of 'submission_platform' but found 2 with different values: [a, b]"
    )
    assert compliance.metadata_only(
        "failed test: sorted(s['initialized_tensors']) == sorted(['pre_rnn'])"
    )
    assert not compliance.metadata_only("Required EXACTLY_ONE occurrence of 'run_stop' but found 0")
    assert not compliance.metadata_only(
        "Required EXACTLY_ONE occurrence of 'opt_base_learning_rate' but found 2 with different values: [1, 2]"
    )
    assert not compliance.metadata_only("Failed checks for eval_accuracy : v['value'] >= 0.72")
    assert not compliance.metadata_only(
        "CHECK for 'run_stop' failed in line 9:\nx\nfailed test: v['metadata']['status'] == 'success'"
    )
    assert not compliance.metadata_only(
        "CHECK for 'submission_division' failed in line 3:\nx\nfailed test: ..."
    )


@pytest.mark.parametrize("name", list(METADATA))
def test_a_run_refused_for_its_metadata_counts_in_history_with_the_complaint(
    tmp_path, published, name
):
    folder = published[name]
    edited = edited_folder(folder, tmp_path / "edited", METADATA[name])
    ruleset = round_of(name)["ruleset"]
    times = []
    for run in runs(edited):
        assert log_verdict(runs(folder)[0].with_name(run.name), ruleset).passes, (
            run.name
        )  # published: passes
        assert log_verdict(run, ruleset).passes is False, (
            run.name
        )  # edited: mlperf-logging refuses it
        history = check_run(run, run.name, context(name, edited, history=True))
        complaints = [f for f in history.findings if f.rule == "mlperf.compliance"]
        assert complaints and all(f.severity == "warning" for f in complaints), complaints
        assert all(compliance.METADATA_IN_HISTORY in f.hint for f in complaints)
        assert history.summary.success, history.summary.failure_reason
        live = check_run(run, run.name, context(name, edited, history=False))
        assert not live.summary.success
        assert "mlperf-logging's checker fails the log" in live.summary.failure_reason
        assert any(f.severity == "error" and f.rule == "mlperf.compliance" for f in live.findings)
        times.append(history.summary.time_to_train_s)

    # The score in history: the olympic mean mlperf-logging's scoring function gives the unedited logs (no RCP
    # factor: the folders hold no scaling.json here), where it gives the edited ones none.
    bench = {b["key"]: b for b in round_of(name)["benchmarks"]}[folder.name]
    required = bench["required_runs"]
    score = scoring.score_result(
        scoring.BenchmarkScoring(folder.name, required),
        [scoring.RunTime(t, success=True) for t in times],
        as_published=True,
    )
    expected_minutes = score_folder(folder, ruleset)
    assert expected_minutes is not None
    assert score.seconds / 60 == pytest.approx(expected_minutes, rel=1e-9)
    assert score_folder(edited, ruleset) is None


@pytest.mark.parametrize(
    "breaking", [aborted, short_of_the_target], ids=["aborted", "short of the target"]
)
@pytest.mark.parametrize("name", list(METADATA))
def test_a_run_refused_for_its_time_or_convergence_stays_refused_in_history(
    tmp_path, published, name, breaking
):
    folder = published[name]
    run = runs(folder)[0]
    both = tmp_path / folder.name / run.name
    both.parent.mkdir()
    both.write_text("\n".join(breaking(METADATA[name](run.read_text().splitlines()))) + "\n")
    # mlperf-logging drops it: its checker refuses it, or its summarizer finds no successful run_stop.
    assert log_verdict(both, round_of(name)["ruleset"]).counted is False
    for history in (True, False):
        outcome = check_run(both, run.name, context(name, both.parent, history=history))
        assert not outcome.summary.success, (history, outcome.summary)
        assert any(f.severity == "error" for f in outcome.findings)


def test_the_folders_are_whole_results_without_a_scaling_factor(published):
    """The score comparison above is of olympic means: every run of the folder, and no scaling.json."""
    for name, folder in published.items():
        bench = {b["key"]: b for b in round_of(name)["benchmarks"]}[folder.name]
        assert len(runs(folder)) >= bench["required_runs"], folder
        assert not (folder / "scaling.json").exists()
