"""MLPerf Power on the real v4.0 round: Sustainable Metal Cloud's smc (time only), smc-ac-power and
smc-dc-power folders, ingested by a real Celery worker on PostgreSQL and Redis.

The expected energies come from mlperf-logging 4.1.68's own scoring functions, run here on a copy of the
folders. Where it divides by zero (a power_measurement_stop logged at the start), the expected energy is
the portal's rule computed by mlperf-logging too: the same folder with those stop lines taken out, which
mlperf-logging reads as a measurement that ends at its last reading.
"""

import contextlib
import io
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard.models import Result
from submissions.models import Finding

from ..conftest import shared_plain_tar
from ..worker import media, media_root, worker  # noqa: F401 (fixtures)

# transaction=True: a worker process reads what the test writes.
pytestmark = [
    pytest.mark.services,
    pytest.mark.shared_rounds,
    pytest.mark.django_db(transaction=True),
]
FOLDERS = ("smc", "smc-ac-power", "smc-dc-power")
ROUND = "training-v4.0"


@pytest.fixture(scope="module")
def smc(tmp_path_factory) -> Path:
    """The three folders, unpacked from the shared round (not the whole round: only what is needed)."""
    out = tmp_path_factory.mktemp("v40") / "smc"
    out.mkdir()
    tarball = shared_plain_tar("training_v4.0_results.tar.xz")
    subprocess.run(
        ["tar", "-xf", str(tarball), "-C", str(out), *(f"./{name}" for name in FOLDERS)],
        check=True,
    )
    return out


def mlperf_logging_scores(folder: Path, benchmark: str) -> tuple[float, float] | None:
    """(time score in minutes, energy score in joules) as mlperf-logging's summarizer computes them; None
    where it divides by zero."""
    # Imported here: it brings pandas and scipy (1.6 s), which every make-test worker would pay to collect.
    from mlperf_logging.result_summarizer import result_summarizer as summarizer

    with contextlib.redirect_stdout(io.StringIO()):
        try:
            score, energy, _ = summarizer._compute_strong_score_standalone(
                benchmark, folder.parent.name, True, str(folder), "training", "4.0.0"
            )
        except ZeroDivisionError:
            return None
    return score, energy


def without_stops_at_start(folder: Path, into: Path) -> Path:
    """A copy of the result folder whose node logs have no power_measurement_stop where it is logged at or
    before power_measurement_start: the portal's rule, as mlperf-logging reads a log without a stop."""
    shutil.copytree(folder, into)
    for node in into.glob("power/*/node_*.txt"):
        lines = node.read_text().splitlines(keepends=True)
        start = next(line for line in lines if '"power_measurement_start"' in line)
        stops = [line for line in lines if '"power_measurement_stop"' in line]
        time = lambda line: int(line.split('"time_ms":')[1].split(",")[0])  # noqa: E731
        if stops and time(stops[0]) <= time(start):
            node.write_text("".join(line for line in lines if line not in stops))
    return into


def test_power_results_have_mlperf_loggings_energy(rounds, worker, smc, tmp_path):
    call_command("ingest", str(smc), "--round", ROUND, "--publish", "--wait", "--timeout", "900")
    results = Result.objects.filter(system__round__key=ROUND).select_related(
        "system__submitter", "system__submission", "benchmark"
    )
    folder_of = {r.pk: r.system.submission.original_name.rpartition(":")[2] for r in results}
    # All three folders stay published: the AC and DC results beside the time-only one.
    assert {folder_of[r.pk] for r in results if r.published} == set(FOLDERS)
    power = [r for r in results if r.power_result]
    assert len(power) == 24 and {folder_of[r.pk] for r in power} == {"smc-ac-power", "smc-dc-power"}
    compared, by_rule, expected_of, doubted = [], [], {}, []
    for result in power:
        folder = smc / result.path
        scores = mlperf_logging_scores(folder, result.benchmark.key)
        if scores is None:
            # The portal's rule for a stop at the start, computed by mlperf-logging. The copy's run logs are the
            # folder's own (only power/ lines are taken out): its time score is the folder's.
            scores = mlperf_logging_scores(
                without_stops_at_start(folder, tmp_path / result.path), result.benchmark.key
            )
            assert Finding.objects.filter(result=result, rule="power.stop-at-start").exists()
            by_rule.append(result)
        else:
            compared.append(result)
        time_min, expected = scores
        assert result.score_s / 60 == pytest.approx(time_min, rel=1e-3)
        expected_of[result.pk] = expected
        # Imported history: the published energy stands, negative readings and all, with the finding
        # that names the reading beside it (the 8-node SSD results, AC and DC).
        assert result.energy_j == pytest.approx(expected, rel=1e-3), result.path
        negative = Finding.objects.filter(result=result, rule="power.negative-reading")
        if negative.exists():
            doubted.append(result)
            assert all(f.line and "counts it as logged" in f.message for f in negative)
    assert len(compared) == 10 and len(by_rule) == 14
    assert sorted(folder_of[r.pk] for r in doubted) == ["smc-ac-power", "smc-dc-power"], [
        r.path for r in doubted
    ]
    print(
        "\n".join(
            f"{folder_of[r.pk]}/{r.system.key}/{r.benchmark.key}: "
            f"{'-' if r.energy_j is None else f'{r.energy_j / 1e3:.1f} kJ'}; mlperf-logging "
            f"{'(by the rule) ' if r in by_rule else ''}{expected_of[r.pk] / 1e3:.1f} kJ"
            for r in power
        )
    )
