"""Which files of a result folder are its runs in imported history: the ones mlperf-logging's tools read (issue
38, item 5). Its result_summarizer, package_checker and RCP checker all glob `<benchmark folder>/result_*.txt`
(mlperf-logging 4.1.68, and every version back to 0.6), so `result_<id>_<n>.txt` (v4.0's long names) is a run of
the published record and `<id>_<n>.log` (Alibaba's v0.7 ResNet) is not. The expected scores are the
summarizer's own scoring function on each folder (tests/summarizer.py), never the portal's."""

import pytest
from django.core.management import call_command

from leaderboard.models import Result
from submissions.checking.bundles import runlogs
from submissions.models import Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

from ...summarizer import score_folder

pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]

MINUTES = [30.0, 32.0, 31.0, 33.0, 29.0]  # retinanet: 5 runs
# system -> how its five logs are named (n = 1 .. 5, as Alibaba numbered them)
NAMES = {
    "plain": "result_{n}.txt",
    "long": "result_200711025203744603517_{n}.txt",
    "alibaba": "200711025203744603517_{n}.log",
}


@pytest.fixture
def folders(tmp_path):
    root = write_bundle(
        tmp_path / "src",
        "Acme",
        [SystemSpec(system, results={"retinanet": MINUTES}) for system in NAMES],
        {"retinanet": 0.34},
    )
    for system, name in NAMES.items():
        folder = root / "results" / system / "retinanet"
        for n in reversed(range(5)):  # result_4.txt to ..._5 first: no name is taken twice
            (folder / f"result_{n}.txt").rename(folder / name.format(n=n + 1))
    return root


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_in_history_the_runs_are_the_logs_mlperf_loggings_tools_read(
    media, published_rounds, folders
):
    expected = {
        system: score_folder(folders / "results" / system / "retinanet", "5.1.0")
        for system in NAMES
    }
    assert expected["plain"] == pytest.approx(31.0) == expected["long"]  # the 3 middle runs
    assert expected["alibaba"] is None  # the tools read no run there

    call_command("ingest", str(folders), "--round", "training-v5.1", "--publish", "--wait")
    assert Submission.objects.get().status == Submission.Status.PUBLISHED
    results = {r.system.key: r for r in Result.objects.select_related("system")}
    for system in ("plain", "long"):
        result = results[system]
        assert result.score_s / 60 == pytest.approx(expected[system]), result.score_message
        assert result.runs_counted == 3 and result.runs.count() == 5

    # The five .log files are read and checked, and shown; they are no runs of the published record, and the
    # result says so, in the count the tools make, instead of five converged runs and "0 of the 5 required
    # runs were submitted".
    alibaba = results["alibaba"]
    assert alibaba.score_s is None and alibaba.runs_counted == 0
    assert alibaba.runs.count() == 5 and all(run.success for run in alibaba.runs.all())
    message = alibaba.score_message
    assert "were submitted" not in message
    assert "0 of the 5 required runs" in message and "result_*.txt" in message
    assert "200711025203744603517_1.log" in message and "5 logs named otherwise" in message


def test_in_a_live_round_a_log_named_otherwise_is_still_a_run(media, rounds, folders):
    call_command("ingest", str(folders), "--round", "training-v5.1")
    alibaba = Result.objects.get(system__key="alibaba")
    assert alibaba.score_s / 60 == pytest.approx(31.0) and alibaba.runs_counted == 3


def test_the_portal_reads_the_names_the_installed_tools_glob():
    import inspect

    from mlperf_logging.package_checker import package_checker
    from mlperf_logging.rcp_checker import rcp_checker
    from mlperf_logging.result_summarizer import result_summarizer

    glob = "'{folder}/" + runlogs.SUMMARIZER_GLOB + "'"
    for tool in (result_summarizer, package_checker, rcp_checker):
        source = inspect.getsource(tool).replace('"', "'")
        assert glob in source, tool.__name__
        assert source.count("{folder}/result_") == source.count(glob), tool.__name__


def test_no_tool_of_the_installed_mlperf_logging_names_a_run_log_otherwise():
    """Every place the installed package lists a result folder's files, in every tool (result_summarizer and its
    compute_score, package_checker, rcp_checker, power and seed checkers), whatever the ruleset: the run logs are
    `result_*.txt` and nothing else (the other globs are the folder's every file, the systems' JSON and the power
    logs). So no ruleset's tools read `<id>_<n>.log` as a run (issue 38, item 5)."""
    import re
    from pathlib import Path

    import mlperf_logging

    globs = set()
    for module in Path(mlperf_logging.__file__).parent.rglob("*.py"):
        globs |= set(re.findall(r"""['"]\{folder\}/([^'"]*)['"]""", module.read_text()))
    assert globs == {
        runlogs.SUMMARIZER_GLOB,
        "*",
        "*.json",
        "power/{result}/node_*.txt",
        "power/{result}/sw_*.txt",
    }
