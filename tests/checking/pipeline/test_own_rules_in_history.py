"""In imported history no check of the portal's own fails a run MLCommons published (issue 38, item 3): its
finding is a warning shown to readers beside the published score, and the olympic mean uses the published runs.
In a live round the same logs fail those runs.

The three shapes the published rounds hold, reproduced on small synthetic v5.1 bundles:
- TPU MiniGo: its eval_accuracy records carry the time the evaluated model was made, hours before the records
  around them (run.clock-outlier);
- a 48-node Mask R-CNN at 10.08x the fastest pace of the older rounds (run.stop-too-early);
- Stable Diffusion: run_stop carries the time of the checkpoint before the one that reached the target
  (run.clock-backwards, with the eval after run_stop).
"""

import json

import pytest
from django.core.management import call_command

from leaderboard.models import Result, Run
from submissions.checking import scoring
from submissions.checking.rules import plausibility
from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

TARGET = 0.72
MINUTES = [20.0 + k for k in range(10)]
MARKER = ":::MLLOG "
FOLDER = "Acme/results/alpha/rgat"
# run index -> (its shape, the rule that fails it in a live round)
SHAPES = {0: "clock-outlier", 1: "stop-too-early", 2: "clock-backwards"}


def record(line: str) -> dict | None:
    at = line.find(MARKER)
    return json.loads(line[at + len(MARKER) :]) if at >= 0 else None


def with_time(line: str, time_ms: int) -> str:
    at = line.find(MARKER)
    return line[:at] + MARKER + json.dumps({**record(line), "time_ms": time_ms})


def keyed(lines: list[str], key: str) -> list[int]:
    return [i for i, line in enumerate(lines) if (r := record(line)) and r["key"] == key]


def evals_made_with_the_models_time(lines: list[str]) -> list[str]:
    """MiniGo: every eval_accuracy carries the time its model was made, hours before it was evaluated."""
    for i in keyed(lines, "eval_accuracy"):
        lines[i] = with_time(lines[i], record(lines[i])["time_ms"] - 3 * 3_600_000)
    return lines


def at_the_pace(lines: list[str], multiple: float) -> list[str]:
    """The timed region squeezed to `multiple` times the fastest pace of the published rounds (R-GAT's is in
    epochs per second per sample of global batch)."""
    (start,), (stop,) = keyed(lines, "run_start"), keyed(lines, "run_stop")
    t0, t1 = record(lines[start])["time_ms"], record(lines[stop])["time_ms"]
    epochs = max(
        r["metadata"]["epoch_num"]
        for line in lines[start : stop + 1]
        if (r := record(line)) and r["key"] in ("eval_accuracy", "eval_stop", "epoch_stop")
    )
    batch = next(
        r["value"] for line in lines if (r := record(line)) and r["key"] == "global_batch_size"
    )
    fastest = plausibility.fastest_pace("rgat", "epochs").per_batch.value * batch
    seconds = epochs / (multiple * fastest)
    for i in range(start + 1, stop + 1):
        if (r := record(lines[i])) is not None:
            lines[i] = with_time(
                lines[i], t0 + round((r["time_ms"] - t0) * seconds * 1000 / (t1 - t0))
            )
    return lines


def stop_at_the_checkpoint_before(lines: list[str]) -> list[str]:
    """Stable Diffusion: run_stop timed at the eval before the one that reached the target."""
    evals = keyed(lines, "eval_accuracy")
    reached = next(i for i in evals if record(lines[i])["value"] >= TARGET)
    before = max(i for i in evals if i < reached)
    (stop,) = keyed(lines, "run_stop")
    lines[stop] = with_time(lines[stop], record(lines[before])["time_ms"])
    return lines


def bundle(tmp_path):
    root = write_bundle(
        tmp_path / "src", "Acme", [SystemSpec("alpha", results={"rgat": MINUTES})], {"rgat": TARGET}
    )
    folder = root / "results" / "alpha" / "rgat"
    for n, edit in (
        (0, evals_made_with_the_models_time),
        (1, lambda lines: at_the_pace(lines, 10.08)),
        (2, stop_at_the_checkpoint_before),
    ):
        path = folder / f"result_{n}.txt"
        path.write_text("\n".join(edit(path.read_text().splitlines())) + "\n")
    return root


def ingest(root, *more):
    call_command("ingest", str(root), "--round", "training-v5.1", "--wait", *more)
    return Submission.objects.get()


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_in_history_the_published_runs_count_and_the_findings_are_shown_beside_the_score(
    media, published_rounds, eager, tmp_path, client
):
    assert 10.08 > plausibility.RUN_ERROR_MULTIPLE  # the premise: 10.08x fails a live run
    submission = ingest(bundle(tmp_path), "--publish")
    assert submission.status == Submission.Status.PUBLISHED, submission.message
    runs = {run.index: run for run in Run.objects.all()}
    for n, shape in SHAPES.items():
        run = runs[n]
        assert run.success and (run.counted or run.dropped), (n, run.failure_reason)
        found = Finding.objects.filter(run=run, rule=f"run.{shape}")
        assert found and {f.severity for f in found} == {"warning"}, n
        assert "Imported history" in found[0].hint
    result = Result.objects.get()
    times = [runs[n].time_to_train_s for n in sorted(runs)]
    expected = scoring.olympic(times, 10).seconds * result.scaling_factor
    assert result.score_s == pytest.approx(expected, rel=1e-9)
    page = client.get(result.get_absolute_url()).content.decode()
    assert f"{result.score_s / 60:.2f}" in page
    for phrase in (
        "records timed off the run&#x27;s clock",
        "a run faster than any system of the published rounds",
        "records of the timed region timed outside it",
    ):
        assert phrase in page


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_in_a_live_round_the_same_logs_fail_their_runs(media, rounds, eager, tmp_path):
    with pytest.raises(Exception, match="did not pass"):  # --wait fails: the submission is invalid
        ingest(bundle(tmp_path))
    runs = {run.index: run for run in Run.objects.all()}
    for n, shape in SHAPES.items():
        run = runs[n]
        assert not run.success, n
        assert Finding.objects.filter(run=run, rule=f"run.{shape}", severity="error").exists(), n
    result = Result.objects.get()
    assert result.score_s is None and "3 of 10 runs failed" in result.score_message
