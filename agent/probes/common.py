"""What every probe shares: the device, the precision, the timed window and the layer scaling.

A probe builds a model and one training step (forward, loss, backward, optimizer step) on
synthetic data; `measure` runs warm-up steps, then a timed window bracketed by device
synchronisation, and returns the samples per second it saw.
"""

import contextlib
import math
import os
import platform
import time
from dataclasses import dataclass

import torch

# Steps when the job does not say: a GPU window long enough to be steady (at least 10 steps and
# MIN_WINDOW_S: ResNet-50's 10 steps took 0.64 s on an H100), a CPU one short enough for CI (CPU
# mode only proves the path, its figure is never compared).
DEFAULT_STEPS = {"cuda": (3, 10), "cpu": (1, 2)}
# AGENT_CPU_MIN_WINDOW_S stretches a CPU window (up to the job's max_seconds): a test that must kill
# an agent in the middle of a job needs one that lasts.
MIN_WINDOW_S = {"cuda": 3.0, "cpu": float(os.environ.get("AGENT_CPU_MIN_WINDOW_S") or 0.0)}


class ProbeError(Exception):
    """The probe could not measure: the message says why (sent to the portal as the error)."""


def pick_device(device: str | None) -> torch.device:
    """CUDA when there is one (or when asked for), else the CPU; asking for CUDA without it is an error."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ProbeError(f"unsupported device {device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ProbeError("CUDA was asked for and this host has none")
    if dev.type == "cuda" and dev.index is None:  # memory queries want an index
        dev = torch.device("cuda", torch.cuda.current_device())
    if dev.type not in ("cuda", "cpu"):
        raise ProbeError(f"unsupported device {device!r}")
    return dev


PRECISIONS = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def dtype_for(precision: str, dev: torch.device) -> torch.dtype:
    """The compute dtype: bf16 (or fp16, for chips without bf16 such as Volta) autocast on CUDA;
    the CPU runs fp32 (its bf16 is slow where it exists at all, and CPU mode is never compared
    with a claim anyway). fp16 runs without loss scaling: on synthetic data only the time counts,
    and a scaler's check is one fused kernel a step."""
    if precision not in PRECISIONS:
        raise ProbeError(f"unknown precision {precision!r} (bf16, fp16 or fp32)")
    return PRECISIONS[precision] if dev.type == "cuda" else torch.float32


def autocast(dev: torch.device, dtype: torch.dtype):
    if dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device_type=dev.type, dtype=dtype)


def synchronize(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def environment(dev: torch.device) -> dict:
    """What ran it: device name, versions, CPU or not."""
    info = {
        "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else _cpu_name(),
        "device_type": dev.type,
        "cpu": dev.type == "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda if dev.type == "cuda" else None,
    }
    info["versions"] = {"torch": info["torch"], "cuda": info["cuda"]}  # as the portal shows them
    if dev.type == "cpu":
        info["threads"] = torch.get_num_threads()
    return info


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return "CPU: " + line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "CPU: " + (platform.processor() or platform.machine())


@dataclass
class Window:
    warmup_steps: int
    steps: int
    seconds: float
    samples_per_step: int

    @property
    def samples_per_second(self) -> float:
        return self.samples_per_step * self.steps / self.seconds


def measure(
    step,
    dev: torch.device,
    *,
    samples_per_step: int,
    warmup_steps: int,
    steps: int,
    max_seconds: float | None = None,
    min_seconds: float = 0.0,
) -> Window:
    """Warm-up (cuDNN autotuning, allocator, optimizer state), then `steps` timed steps, more when
    they would take less than `min_seconds`; with `max_seconds`, fewer when the last warm-up step
    says they would not fit (at least 1)."""
    warmup_steps = max(1, warmup_steps)  # the optimizer's state and the kernels' choice come first
    started = time.perf_counter()
    for _ in range(warmup_steps - 1):
        step()
    synchronize(dev)
    last = time.perf_counter()
    step()
    synchronize(dev)
    per_step = time.perf_counter() - last
    if min_seconds:
        steps = max(steps, math.ceil(min_seconds / max(per_step, 1e-9)))
    if max_seconds is not None:
        left = max_seconds - (time.perf_counter() - started)
        steps = max(1, min(steps, math.floor(left / max(per_step, 1e-9))))
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    synchronize(dev)
    seconds = time.perf_counter() - t0
    # Steps got faster after the warm-up (allocator and caches settled): top the window up to
    # min_seconds at the rate just seen, within max_seconds.
    while seconds < min_seconds:
        rate = seconds / steps
        more = math.ceil((min_seconds - seconds) / max(rate, 1e-9))
        if max_seconds is not None:
            more = min(more, math.floor((max_seconds - (time.perf_counter() - started)) / rate))
        if more < 1:
            break
        for _ in range(more):
            step()
        synchronize(dev)
        steps += more
        seconds = time.perf_counter() - t0
    return Window(warmup_steps, steps, seconds, samples_per_step)


def layer_scaled(
    samples_per_second: float,
    *,
    layers_run: int,
    layers_full: int,
    layer_flops: float,
    fixed_flops: float,
) -> float:
    """The full model's samples/s from a run with fewer layers of full width.

    A step's time is taken as proportional to its FLOPs: `fixed_flops` (embedding and output
    head, run once whatever the depth) plus `layer_flops` per layer. Scaling the whole time by
    layers_full / layers_run would charge the output head once per missing layer too: for Llama
    3.1 8B at 4 of 32 layers the head is ~2.4 layers' worth, which would understate the full
    model's throughput by a third.
    """
    if not 0 < layers_run <= layers_full:
        raise ValueError(f"layers_run {layers_run} must be in 1..{layers_full}")
    if layer_flops <= 0 or fixed_flops < 0:
        raise ValueError("layer_flops must be positive and fixed_flops not negative")
    run = fixed_flops + layers_run * layer_flops
    full = fixed_flops + layers_full * layer_flops
    return samples_per_second * run / full


def out_of_memory(exc: BaseException) -> bool:
    oom = getattr(torch.cuda, "OutOfMemoryError", ())
    return isinstance(exc, oom) or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()
    )


def free_memory(dev: torch.device) -> None:
    import gc

    gc.collect()
    if dev.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(dev)


def make_optimizer(kind: str, params, dev: torch.device, lr: float):
    """The optimizer's step is part of the timed step; fused kernels on CUDA where this torch has them."""
    params = [p for p in params if p.requires_grad]
    cls = {"adamw": torch.optim.AdamW, "adam": torch.optim.Adam, "sgd": torch.optim.SGD}[kind]
    kwargs = {"lr": lr}
    if kind == "sgd":
        kwargs["momentum"] = 0.9
    if dev.type == "cuda":
        with contextlib.suppress(TypeError, RuntimeError):
            return cls(params, fused=True, **kwargs)
    return cls(params, **kwargs)
