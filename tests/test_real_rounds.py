"""The three shared MLPerf rounds, ingested from their tarballs by a real Celery worker.

Runs on PostgreSQL and Redis (skips with the reason otherwise). The expected scores were
computed by hand from the logs: run_stop − run_start per run, olympic mean, × scaling.json.
"""

import pytest
from django.core.management import call_command

from leaderboard.models import Result, Run, System
from submissions.models import Finding, Submission

from .conftest import shared_tarball
from .worker import media, media_root, worker  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.services, pytest.mark.shared_rounds]


def ingest_round(key, tarball):
    call_command(
        "ingest",
        str(shared_tarball(tarball)),
        "--round",
        key,
        "--publish",
        "--wait",
        "--timeout",
        "900",
    )
    call_command(
        "round_report", "--round", key
    )  # printed with the test's output: what became of each result


def result(round_key, submitter, system, benchmark):
    return Result.objects.get(
        system__round__key=round_key,
        system__submitter__name=submitter,
        system__key=system,
        benchmark__key=benchmark,
    )


def counts(round_key):
    return (
        System.objects.filter(round__key=round_key).count(),
        Result.objects.filter(system__round__key=round_key).count(),
        Run.objects.filter(result__system__round__key=round_key).count(),
    )


def test_training_v05(published_rounds, worker):
    ingest_round("training-v0.5", "training_v0.5_results.tar.xz")
    assert Submission.objects.filter(round__key="training-v0.5").count() == 3
    assert counts("training-v0.5") == EXPECTED["training-v0.5"]
    resnet = Result.objects.get(
        system__round__key="training-v0.5",
        path__endswith="cloud_v2.8/resnet-tpuv2-8/results/tpu/resnet",
    )
    assert round(resnet.score_s / 60, 2) == 301.58
    assert round(resnet.speedup, 2) == 29.28
    assert resnet.published
    pods = [
        Result.objects.get(
            system__round__key="training-v0.5", path__endswith=f"{pod}/results/tpu/resnet"
        ).system
        for pod in ("cloud_v2.512/resnet-tpuv2-512", "research_v3.32/resnet-tpuv3-32")
    ]
    assert [(pod.accelerator_count, pod.nodes) for pod in pods] == [
        (512, 64),
        (32, 2),
    ]  # not 64 x 512


def test_training_v06(published_rounds, worker):
    ingest_round("training-v0.6", "training_v0.6_results.tar.xz")
    assert counts("training-v0.6") == EXPECTED["training-v0.6"]
    assert (
        round(result("training-v0.6", "Google", "tpu-v3-2048", "transformer").score_s / 60, 2)
        == 0.85
    )
    assert round(result("training-v0.6", "Google", "tpu-v3-32", "gnmt").score_s / 60, 2) == 12.25
    assert (
        round(result("training-v0.6", "NVIDIA", "dgx1_ngc19.05_mxnet", "resnet").score_s / 60, 2)
        == 115.22
    )
    assert result("training-v0.6", "Google", "tpu-v3-2048", "transformer").speedup is None
    described = System.objects.filter(
        round__key="training-v0.6",
        key__in=["abci_2048xV100_mxnet", "clx-8260l-2s-x32", "dgx2h_n96_ngc19.05_mxnet"],
    )
    assert sorted(
        described.values_list("key", "accelerator_count", "nodes", "processor_count")
    ) == [
        ("abci_2048xV100_mxnet", 2048, 512, 1024),  # written as an entry.json
        ("clx-8260l-2s-x32", 0, 32, 64),  # "number of nodes"; CPU only: 0 accelerators stated
        ("dgx2h_n96_ngc19.05_mxnet", 1536, 96, 192),  # log lines, a Python literal inside
    ]
    # Nothing silently absent: every result is public (imported history), with a score or the reason it has none.
    results = Result.objects.filter(system__round__key="training-v0.6")
    assert not results.filter(published=False).exists()
    assert not results.filter(score_s__isnull=True, score_message="").exists()
    minigo = result("training-v0.6", "NVIDIA", "dgx1_ngc19.05_tensorflow", "minigo")
    # NVIDIA's MiniGo logs have no run_stop: its round's rules (0.6.0's minigo.yaml) time a run by its
    # eval_result, so the result is scored; tests/test_published_record.py compares it with the summarizer's.
    assert minigo.score_s is not None and minigo.runs.filter(success=True).count() == 10
    assert result("training-v0.6", "Alibaba", "sinian", "resnet").published
    v06 = System.objects.filter(round__key="training-v0.6")
    assert not v06.filter(accelerator_count__isnull=True).exists()
    assert sorted(v06.filter(accelerator_model="").values_list("key", flat=True)) == [
        "clx-8260l-2s-x32",
        "clx-9282-2s-x1",
    ]  # Intel's CPU-only systems


def test_training_v51(published_rounds, worker):
    ingest_round("training-v5.1", "training_v5.1_results.tar.xz")
    statuses = dict(
        Submission.objects.filter(round__key="training-v5.1").values_list(
            "submitter__name", "status"
        )
    )
    assert len(statuses) == 19 and set(statuses.values()) == {"published"}
    results = Result.objects.filter(system__round__key="training-v5.1")
    # v5.1 is imported history: every result is public, as MLCommons published the round. The one result
    # without a score is Dell's empty llama2_70b_lora folder: public with the reason it has none, and its own
    # finding (advisory, for reviewers), which held it back when v5.1 was checked as a live round.
    assert (results.count(), results.filter(score_s__isnull=False).count()) == (185, 184)
    assert results.filter(published=True).count() == 185
    unscored = results.get(score_s__isnull=True)
    assert (unscored.system.submitter.name, unscored.system.key, unscored.benchmark.key) == (
        "Dell",
        "2xXE9685Lx8B200-SXM-180GB",
        "llama2_70b_lora",
    )
    assert unscored.score_message
    assert Finding.objects.filter(
        result=unscored, severity="error", rule="bundle.no-run-log", advisory=True
    ).exists()
    # University of Florida's hpg.dgxb200x8.n8 rgat runs use two learning rates (7 at 0.003, 3 at 0.005). Equal
    # hyperparameters across runs is the portal's own check, not mlperf-logging's: a warning for reviewers, so
    # all 26 of that submission's results are public.
    florida = results.filter(system__submitter__name="University-of-Florida")
    assert (florida.count(), florida.filter(published=True).count()) == (26, 26)
    finding = Finding.objects.get(
        rule="result.hyperparameters-equal",
        severity="warning",
        validation__submission__submitter__name="University-of-Florida",
        message__contains="opt_base_learning_rate",
    )
    assert finding.file.startswith("University-of-Florida/results/hpg.dgxb200x8.n8/rgat/result_")
    assert counts("training-v5.1") == EXPECTED["training-v5.1"]
    # Public ids: one per public result, all distinct, in MLPerf's form.
    ids = list(results.filter(published=True).values_list("public_id", flat=True))
    assert len(set(ids)) == 185 and all(i.startswith("5.1-") and len(i) == 8 for i in ids)
    rgat = result("training-v5.1", "Dell", "1xXE9680x8H200-SXM-141GB", "rgat")
    # The factor is the one Dell's scaling.json published; the portal's RCP check computes the same (no
    # result.rcp-scaling warning).
    assert rgat.scaling_factor == pytest.approx(1.003734827264239, rel=1e-6)
    assert rgat.claimed_scaling_factor == pytest.approx(1.003734827264239)
    assert not Finding.objects.filter(result=rgat, rule="result.rcp-scaling").exists()
    assert round(rgat.score_s / 60, 2) == 7.81
    assert (
        round(
            result("training-v5.1", "NVIDIA", "tyche_ngpu72_ngc25.04_pytorch", "retinanet").score_s
            / 60,
            2,
        )
        == 3.77
    )


EXPECTED = {  # (systems, results, runs), counted from the unpacked trees: every benchmark folder is a result,
    # with or without logs (v0.5: Intel's 4 and NVIDIA's 8 empty ones; v0.6: 2 MiniGo; v5.1: Dell's llama2_70b_lora)
    "training-v0.5": (24, 47, 600),
    "training-v0.6": (32, 63, 430),
    "training-v5.1": (91, 185, 1669),
}
