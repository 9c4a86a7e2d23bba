"""Logs in mlperf-logging's format for the tests of the rules: one `:::MLLOG` line (mllog), a v5.1 R-GAT
log from the demo generator that mlperf-logging's checker passes (generated_rgat_log), and a log
written to a file (write) under the bundle path REL, and the benchmark keys of 5.1.0 (V51_KEYS)."""

import json

from submissions.synthetic.logs import mllog_run

T0 = 1_760_000_000_000
REL = "ACME/results/sys/rgat/result_0.txt"
# The benchmarks of the 5.1.0 ruleset (RunContext.benchmark_keys).
V51_KEYS = frozenset(
    {"llama31_405b", "llama31_8b", "llama2_70b_lora", "flux1", "dlrm_dcnv2", "rgat", "retinanet"}
)


def mllog(key, value=None, t=0, **metadata):
    record = {
        "namespace": "",
        "time_ms": T0 + t,
        "event_type": "POINT_IN_TIME",
        "key": key,
        "value": value,
        "metadata": {"file": "train.py", "lineno": 1, **metadata},
    }
    return ":::MLLOG " + json.dumps(record)


def generated_rgat_log(seed=1) -> str:
    """A v5.1 R-GAT log from the demo generator, completed with what mlperf-logging's rules ask for."""
    text = mllog_run(
        benchmark="rgat",
        org="ACME",
        division="closed",
        status="onprem",
        platform="1xTEST",
        seed=seed,
        start_ms=T0,
        minutes=12,
        target=0.72,
        evals=4,
        hyperparameters={
            "opt_name": "adam",
            "opt_base_learning_rate": 0.001,
            "eval_samples": 788_379,
            "global_batch_size": 16384,
        },
    )
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if '"run_start"' in line)
    lines.insert(
        start + 1, mllog("block_start", None, 1, first_epoch_num=0, epoch_count=1, samples_count=0)
    )
    stop = next(i for i, line in enumerate(lines) if '"run_stop"' in line)
    lines.insert(stop, mllog("block_stop", None, 12 * 60_000, first_epoch_num=0))
    return "\n".join(lines) + "\n"


def write(tmp_path, text, name="result_0.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path
