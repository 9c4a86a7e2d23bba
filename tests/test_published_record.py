"""The shared rounds reproduce the published record: every result that mlperf-logging's result_summarizer
scores has the portal's score within 0.1%.

The expected table is MLCommons' tool's, made here, on a copy of the round unpacked into a temporary
folder (tests/summarizer.py: the command per submitter folder; its scoring function for the systems the
command leaves out, which each row says). The portal ingests the round from the same tarball with a real
worker on PostgreSQL and Redis, as an operator imports history (`ingest --publish`).

v0.5 is not here: mlperf-logging has no ruleset 0.5.0 (its parser does not read `:::MLPv0.5.0` lines), so
the summarizer cannot score it; tests/test_real_rounds.py checks v0.5 from its logs.

Ingesting v1.0 and v4.0 (560-590 MB of logs each) and running the summarizer on them take minutes: run
these one at a time.
"""

from collections import Counter

import pytest

from leaderboard.models import Result
from submissions.checking.pipeline.publication import held_results
from submissions.models import Submission

from . import summarizer
from .conftest import round_param, shared_tarball
from .test_real_rounds import ingest_round
from .worker import media, media_root, worker  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.services, pytest.mark.shared_rounds]

ROUNDS = {  # round: (tarball, mlperf-logging ruleset)
    "training-v0.6": ("training_v0.6_results.tar.xz", "0.6.0"),
    "training-v1.0": ("training_v1.0_results.tar.xz", "1.0.0"),
    "training-v4.0": ("training_v4.0_results.tar.xz", "4.0.0"),
    "training-v5.1": ("training_v5.1_results.tar.xz", "5.1.0"),
}

MISSING = "logs missing from the public snapshot (../shared/mlperf/README.md)"
# The results the comparison leaves out: only folders that lack logs MLCommons had (the README lists them), so
# that the summarizer, given this copy, does not score what was published. The test checks each one holds
# fewer logs than its benchmark requires.
LEFT_OUT = {
    "training-v0.6": {},
    "training-v1.0": {
        ("Dell", "XE8545x4A100-SXM-80GB", "bert"): MISSING,
        ("NVIDIA", "dgxa100_n128_ngc21.05_mxnet", "resnet"): MISSING,
        ("NVIDIA", "dgxa100_n128_ngc21.05_pytorch", "bert"): MISSING,
        ("NVIDIA", "dgxa100_n192_ngc21.05_pytorch", "rnnt"): MISSING,
        ("NVIDIA", "dgxa100_n310_ngc21.05_mxnet", "resnet"): MISSING,
        ("NVIDIA", "dgxa100_n34_ngc21.05_pytorch", "maskrcnn"): MISSING,
        ("NVIDIA", "dgxa100_n4_ngc21.05_pytorch", "maskrcnn"): MISSING,
        ("NVIDIA", "dgxa100_n512_ngc21.05_pytorch", "bert"): MISSING,
        ("Supermicro", "as-2124gq-nart+", "maskrcnn"): MISSING,
        ("Supermicro", "as-4142gs-tnr", "maskrcnn"): MISSING,
    },
    "training-v4.0": {
        ("JuniperNetworks", "a100_n8_ngc23.09_pytorch", "bert"): MISSING,
        ("JuniperNetworks", "h100_n4_ngc23.09_pytorch", "bert"): MISSING,
        ("JuniperNetworks", "h100_n4_ngc23.09_merlin_hugectr", "dlrm_dcnv2"): MISSING,
    },
    "training-v5.1": {},
}


def portal_results(round_key):
    """{(submitter, system, benchmark folder): Result} of the round, by the folder each was read from."""
    table = {}
    for result in Result.objects.filter(system__round__key=round_key):
        submitter, _, system, folder = result.path.split("/")[-4:]
        table[(submitter, system, folder)] = result
    return table


def held_rules(round_key):
    """{rule id: results it holds back} over the round's submissions (the first blocking finding of each)."""
    return Counter(
        held.finding.rule
        for submission in Submission.objects.filter(round__key=round_key)
        for held in held_results(submission)
    )


def compare(round_key, expected, portal):
    """The report line and the disagreements: (key, summarizer minutes, portal minutes or None, how)."""
    scored = {k: e for k, e in expected.items() if e.minutes is not None}
    equal, unequal = 0, []
    for key, e in sorted(scored.items()):
        result = portal.get(key)
        minutes = None if result is None or result.score_s is None else result.score_s / 60
        if minutes is not None and minutes == pytest.approx(e.minutes, rel=1e-3):
            equal += 1
        else:
            unequal.append((key, e.minutes, minutes, e.how))
    report = (
        f"{round_key}: {len(expected)} result folders, {len(scored)} scored by the summarizer "
        f"({sum(e.how != 'command' for e in scored.values())} by its scoring function), "
        f"{sum(r.score_s is not None for r in portal.values())} scored by the portal, "
        f"{equal} equal within 0.1%, {sum(r.published for r in portal.values())} public, "
        f"held: {dict(held_rules(round_key))}"
    )
    return report, unequal


@pytest.mark.parametrize("round_key", [round_param(key) for key in ROUNDS])
def test_every_score_the_summarizer_gives_is_the_portals(
    round_key, published_rounds, worker, tmp_path
):
    tarball, ruleset = ROUNDS[round_key]
    root = summarizer.unpack(shared_tarball(tarball), tmp_path / "round")
    (tmp_path / "out").mkdir()
    expected = summarizer.expected(root, ruleset, tmp_path / "out")
    ingest_round(round_key, tarball)
    portal = portal_results(round_key)
    report, unequal = compare(round_key, expected, portal)
    print(report)
    left_out = LEFT_OUT[round_key]
    for key, why in left_out.items():
        print(f"  left out: {'/'.join(key)}: {why}")
    for key, e in sorted(expected.items()):
        if e.minutes is None and key not in left_out:
            result = portal.get(key)
            got = (
                None
                if result is None or result.score_s is None
                else f"{result.score_s / 60:.4f} min"
            )
            print(f"  not scored by the summarizer ({e.how}): {'/'.join(key)}; portal: {got}")
    for key, want, got, how in unequal:
        print(f"  {'/'.join(key)}: summarizer {want:.4f} min ({how}), portal {got}")

    assert set(portal) == set(expected)  # every result folder is a result of the portal
    required = {b.key: b.required_runs for b in published_rounds[round_key].benchmarks.all()}
    for submitter, system, folder in left_out:  # each holds fewer logs than its benchmark needs
        logs = list((root / submitter / "results" / system / folder).glob("result_*.txt"))
        assert len(logs) < required[portal[(submitter, system, folder)].benchmark.key]
    assert [u for u in unequal if u[0] not in left_out] == []
