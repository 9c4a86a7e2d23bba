"""Fuzz the log parser and the run checks: parse_file, summarize, rules.check_run, and what the pipeline stores.

The first byte picks the round (v5.1, v0.6, v0.5) and benchmark the log is checked for; the rest is the log.
Any exception is a crash: check_run turns what it sees into findings, and the stored fields must be JSON that
PostgreSQL takes (no NaN or Infinity) with lines and times in range.
"""

import json
import os
import sys

from _harness import SCRATCH, instrumented, main

with instrumented():
    from submissions.checking import rules
    from submissions.checking.logs import parse_file, summarize
    from submissions.checking.safejson import storable
    from submissions.synthetic.logs import mllog_run, mlperf05_run

CONTEXTS = [  # (ruleset, benchmark, the round's keys, quality target)
    ("5.1.0", "rgat", frozenset({"rgat", "retinanet", "llama31_8b"}), 0.72),
    ("5.1.0", "retinanet", frozenset({"rgat", "retinanet", "llama31_8b"}), 0.34),
    ("0.6.0", "resnet", frozenset({"resnet", "ssd", "maskrcnn"}), 0.759),
    ("0.5.0", "resnet", frozenset({"resnet", "ssd", "maskrcnn"}), 0.749),
]
LOG = SCRATCH / f"result_0.{os.getpid()}.txt"
MAX_INT = 2**31 - 1  # PositiveIntegerField


def seeds() -> list[bytes]:
    v51 = mllog_run(
        benchmark="rgat",
        org="Acme",
        division="closed",
        status="onprem",
        platform="s",
        seed=1,
        start_ms=1_760_000_000_000,
        minutes=1.0,
        target=0.72,
        success=True,
    ).encode()
    v05 = mlperf05_run(
        benchmark="resnet", seed=1, start_s=1_540_000_000.0, minutes=1.0, target=0.749
    ).encode()
    head = b'{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": '
    odd = b"\n".join(
        [
            b":::MLLOG " + head + b'"run_start", "value": null, "metadata": {}}',
            b":::MLLOG " + head + b'"global_batch_size", "value": NaN, "metadata": {}}',
            b":::MLLOG "
            + head
            + b'"opt_base_learning_rate", "value": '
            + b"[" * 40
            + b"]" * 40
            + b', "metadata": {}}',
            b':::MLLOG {"time_ms": 1e999, "key": "eval_accuracy", "value": Infinity, "metadata": {"epoch_num": 1}}',
            b':::MLLOG {"time_ms": 2, "key": "run_stop", "value": null, "metadata": {"status": "success"}}',
        ]
    )
    return [
        bytes([0]) + v51,
        bytes([3]) + v05,
        bytes([0]) + odd,
        bytes([2]) + b":::MLL 1.0 run_start\n",
    ]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    ruleset, benchmark, keys, target = CONTEXTS[data[0] % len(CONTEXTS)]
    LOG.write_bytes(data[1:])
    try:
        log = parse_file(LOG)
        summarize(log, quality_target=target)
        ctx = rules.RunContext(
            ruleset=ruleset,
            benchmark=benchmark,
            benchmark_keys=keys,
            quality_target=target,
            require_init_stop_before_run_start=data[0] & 0x80 == 0x80,
        )
        outcome = rules.check_run(LOG, "Acme/results/s/rgat/result_0.txt", ctx)
    finally:
        LOG.unlink(missing_ok=True)
    s = outcome.summary
    stored, _ = storable(
        {
            "hyperparameters": s.hyperparameters,
            "eval_curve": s.eval_curve,
            "submission_keys": s.submission,
            "convergence": outcome.convergence,
        }
    )
    json.dumps(stored, allow_nan=False)
    for finding in outcome.findings:
        assert finding.line is None or 0 <= finding.line <= MAX_INT, finding
        assert (
            isinstance(finding.message, str)
            and isinstance(finding.rule, str)
            and len(finding.rule) <= 60
        ), finding


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    main(seeds, test_one_input)
