"""Catalogue rows for the read side's tests, made directly (fast) in the shape the pipeline writes."""

import itertools
import uuid

from leaderboard.models import Result, Round, Run, Submitter, System
from submissions.models import Submission

_seq = itertools.count(1)


def submission(round_: Round, submitter: Submitter | None = None) -> Submission:
    n = next(_seq)
    return Submission.objects.create(
        round=round_,
        submitter=submitter,
        bundle=f"bundles/test-{n}.tgz",
        original_name=f"test-{n}.tgz",
        sha256=uuid.uuid4().hex + uuid.uuid4().hex,
        size=1,
        status=Submission.Status.PUBLISHED,
    )


def system(
    round_: Round, submitter: str = "Acme", key: str | None = None, *, published=True, **fields
) -> System:
    org, _ = Submitter.objects.get_or_create(name=submitter)
    key = key or f"sys-{next(_seq)}"
    defaults = {
        "name": key,
        "division": "closed",
        "category": "onprem",
        "accelerator_model": "NVIDIA H100-SXM5-80GB",
        "accelerator_count": 8,
        "processor_model": "Intel Xeon Platinum 8480C",
        "processor_count": 2,
        "nodes": 1,
        "framework": "PyTorch 25.09",
    }
    defaults.update(fields)
    return System.objects.create(
        submission=submission(round_, org),
        round=round_,
        submitter=org,
        key=key,
        published=published,
        **defaults,
    )


def result(
    system_: System, benchmark_key: str, minutes: float | None, *, published=True, runs=0, **fields
) -> Result:
    bench = system_.round.benchmarks.get(key=benchmark_key)
    score_s = None if minutes is None else minutes * 60
    speedup = bench.reference_time_s / score_s if bench.reference_time_s and score_s else None
    result_ = Result.objects.create(
        system=system_,
        benchmark=bench,
        path=f"results/{system_.key}/{benchmark_key}",
        score_s=score_s,
        speedup=speedup,
        runs_counted=runs,
        published=published,
        **fields,
    )
    for i in range(runs):
        Run.objects.create(
            result=result_,
            index=i,
            path=f"results/{system_.key}/{benchmark_key}/result_{i}.txt",
            checked=True,
            success=True,
            time_to_train_s=score_s + i,
            seed=str(1000 + i),
            counted=0 < i < runs - 1,
            dropped=i in (0, runs - 1),
            eval_x="epoch",
            eval_curve=[[1, 0.5], [2, 0.7], [3, 0.76]],
            hyperparameters={
                "global_batch_size": 256,
                "opt_base_learning_rate": 0.1 * (1 + (i == 2)),
            },
        )
    return result_


def llama31_result(
    round_: Round, accelerator="NVIDIA H100-SXM5-80GB", *, published=True, seconds=600.0
) -> Result:
    """A closed llama31_8b result on 8 accelerators whose three counted runs (seconds - 60, seconds,
    seconds + 60) processed 159,744 samples each, stored as the pipeline stores them."""
    sys_ = system(round_, "Acme", accelerator_model=accelerator, published=published)
    made = result(sys_, "llama31_8b", seconds / 60, published=published)
    for i, s in enumerate((seconds - 60, seconds, seconds + 60)):
        Run.objects.create(
            result=made,
            index=i,
            path=f"results/{sys_.key}/llama31_8b/result_{i}.txt",
            checked=True,
            success=True,
            counted=True,
            time_to_train_s=s,
            eval_x="samples",
            eval_curve=[[12_288, 5.0], [159_744, 3.29]],
            hyperparameters={"global_batch_size": 16, "max_sequence_length": 8192},
        )
    return made
