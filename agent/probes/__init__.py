"""Probes: a short timed window of a benchmark's model, training on synthetic data.

    run_probe("llama31_8b", batch_size=2, seq_len=8192)   # on CUDA when there is one

returns a plain JSON-able dict: `samples_per_second_per_accelerator` and exactly what ran
(model, shapes, layers run and of the full model, steps, dtype, device name, torch and CUDA
versions, "cpu", "scaled_by_layers"). Without CUDA the same code runs a miniature of the model
on the CPU, labelled CPU: it proves the path and is never to be compared with a GPU claim.
A benchmark without a probe raises ProbeError("no probe for this benchmark").

Pure: no Django, no Celery; the agent (agent/app.py) and bench/probe.py call it.
"""

import os
import time

# Set before CUDA starts: the transformer probes build and free models of different depths,
# which fragments the default allocator's fixed segments.
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

from . import common, resnet, retinanet, transformer  # noqa: E402
from .common import ProbeError  # noqa: E402

__all__ = ["PROBES", "ProbeError", "run_probe"]

PROBES = {
    "llama31_8b": transformer.probe,
    "llama2_70b_lora": transformer.probe,
    "resnet": resnet.probe,
    "retinanet": retinanet.probe,
}

# Per-accelerator batch and sequence length of the v5.1 logs (8-GPU H200/B200 systems) and
# MLPerf's ResNet-50 size, for the benchmark and the GPU script; a job always says its own batch.
TYPICAL = {
    "llama31_8b": {"batch_size": 2, "seq_len": 8192},
    "llama2_70b_lora": {"batch_size": 1, "seq_len": 8192},
    "resnet": {"batch_size": 256, "seq_len": None},
    "retinanet": {"batch_size": 32, "seq_len": None},
}


def run_probe(
    benchmark: str,
    *,
    batch_size: int,
    seq_len: int | None = None,
    device: str | None = None,
    warmup_steps: int | None = None,
    steps: int | None = None,
    precision: str = "bf16",
    max_seconds: float | None = None,
) -> dict:
    """Measure `benchmark`'s training throughput per accelerator; see the module docstring.

    `max_seconds` bounds the warm-up plus the timed window (fewer timed steps, at least one)."""
    probe = PROBES.get(benchmark)
    if probe is None:
        raise ProbeError("no probe for this benchmark")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ProbeError(f"batch size must be a positive integer, not {batch_size!r}")
    if seq_len is not None and (not isinstance(seq_len, int) or not 1 <= seq_len <= 131072):
        raise ProbeError(f"sequence length must be an integer in 1..131072, not {seq_len!r}")
    dev = common.pick_device(device)
    if dev.type == "cpu":
        # CPU mode's miniatures are a few hundred tiny ops a step: OpenMP threads only add barrier
        # waits (a ResNet step took 0.75 s with 2 threads on a busy 2-core host, 0.04 s with 1).
        common.torch.set_num_threads(int(os.environ.get("AGENT_CPU_THREADS", "1")))
    dtype = common.dtype_for(precision, dev)
    default_warmup, default_steps = common.DEFAULT_STEPS[dev.type]
    started = time.perf_counter()
    result = probe(
        benchmark,
        batch_size=batch_size,
        seq_len=seq_len,
        dev=dev,
        dtype=dtype,
        warmup_steps=default_warmup if warmup_steps is None else warmup_steps,
        steps=max(1, default_steps if steps is None else steps),
        max_seconds=max_seconds,
        min_seconds=common.MIN_WINDOW_S[dev.type] if steps is None else 0.0,
    )
    window = result.pop("window")
    result.update(
        benchmark=benchmark,
        precision=precision,
        dtype=str(dtype).removeprefix("torch."),
        autocast=dtype != common.torch.float32,
        warmup_steps=window.warmup_steps,
        steps=window.steps,
        timed_seconds=window.seconds,
        probe_seconds=time.perf_counter() - started,
        **common.environment(dev),
    )
    return result
