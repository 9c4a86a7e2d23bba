"""Deterministic synthetic MLPerf result logs (v5.1 `:::MLLOG` and v0.5 `:::MLPv0.5.0` text) for demos and tests."""
from __future__ import annotations

import json
import random

_DEFAULT_HP = {
    "global_batch_size": 256,
    "gradient_accumulation_steps": 1,
    "train_samples": 1_281_167,
    "opt_name": "sgd",
    "opt_base_learning_rate": 0.1,
    "opt_learning_rate_warmup_steps": 100,
}


def _rng(*parts) -> random.Random:
    # A str seed is hashed with SHA-512, so runs are reproducible regardless of PYTHONHASHSEED.
    return random.Random("|".join(repr(p) for p in parts))


def _curve(rng: random.Random, target: float, evals: int, success: bool) -> list[float]:
    """Metrics rising towards target; the last one reaches it only when success."""
    last = target * (1 + rng.uniform(0.001, 0.01)) if success else target * rng.uniform(0.9, 0.99)
    first = target * rng.uniform(0.3, 0.6)
    out = []
    for k in range(1, evals + 1):
        frac = (k / evals) ** 0.7
        wobble = 0.0 if k == evals else target * rng.uniform(-0.01, 0.01)
        value = first + (last - first) * frac + wobble
        out.append(value if k == evals else min(value, target * 0.999))  # only the last eval may hit target
    return out


def mllog_run(*, benchmark: str, org: str, division: str, status: str, platform: str, seed: int,
              start_ms: int, minutes: float, target: float, success: bool = True, evals: int = 5,
              hyperparameters: dict | None = None) -> str:
    """Text of a v5.1-style result file whose run_start is at start_ms and run_stop `minutes` later."""
    rng = _rng("mllog", benchmark, org, division, status, platform, seed, start_ms, minutes, target,
               success, evals, sorted((hyperparameters or {}).items()))
    hp = {**_DEFAULT_HP, **(hyperparameters or {})}
    lines: list[str] = []

    def emit(t: int, key: str, value=None, kind: str = "POINT_IN_TIME", prefix: str = "", **metadata) -> None:
        record = {"namespace": "", "time_ms": t, "event_type": kind, "key": key, "value": value,
                  "metadata": {"file": "train.py", "lineno": 100 + len(lines), **metadata}}
        lines.append(prefix + ":::MLLOG " + json.dumps(record))

    init_start = start_ms - rng.randint(30_000, 180_000)
    duration = round(minutes * 60_000)
    emit(init_start - 5, "cache_clear", True)
    emit(init_start, "init_start", kind="INTERVAL_START")
    for name, value in (("benchmark", benchmark), ("org", org), ("division", division),
                        ("status", status), ("platform", platform)):
        emit(init_start + 1, f"submission_{name}", value)
    emit(init_start + 2, "seed", seed)
    for key, value in hp.items():
        emit(init_start + 2, key, value)
    emit(init_start + 2, "target_accuracy", target)
    lines.append(f"Initialization done in {(start_ms - init_start) / 1000:.1f} s")  # noise, as real logs have
    emit(start_ms - 1, "init_stop", kind="INTERVAL_END")
    emit(start_ms, "run_start", kind="INTERVAL_START")

    gbs = int(hp.get("global_batch_size") or 256)
    train_samples = int(hp.get("train_samples") or 1)
    per_eval = gbs * max(1, round(train_samples * rng.uniform(0.5, 4.0) / gbs))  # 0.5-4 epochs per eval
    samples = epoch = 0
    for k, metric in enumerate(_curve(rng, target, evals, success), start=1):
        t = start_ms + duration * k // evals
        samples = per_eval * k
        epoch = round(samples / train_samples, 4)
        emit(max(start_ms, t - 2), "tracked_stats", {"train_loss": round(rng.uniform(0.5, 3.0), 4)},
             step=samples // gbs, samples_count=samples)
        # srun-style "0: " prefixes appear on real multi-node logs.
        emit(max(start_ms, t - 1), "eval_start", kind="INTERVAL_START", prefix="0: " if k % 2 else "",
             epoch_num=epoch, samples_count=samples)
        emit(t, "eval_accuracy", metric, epoch_num=epoch, samples_count=samples)
        emit(t, "eval_stop", kind="INTERVAL_END", epoch_num=epoch, samples_count=samples)
    emit(start_ms + duration, "run_stop", kind="INTERVAL_END",
         status="success" if success else "aborted", epoch_num=epoch, samples_count=samples)
    lines.append("+ ret_code=0")
    return "\n".join(lines) + "\n"


def mlperf05_run(*, benchmark: str, seed: int, start_s: float, minutes: float, target: float,
                 success: bool = True, evals: int = 5) -> str:
    """Text of a v0.5-style result file whose run_start is at start_s and run_stop `minutes` later."""
    rng = _rng("mlperf05", benchmark, seed, start_s, minutes, target, success, evals)
    lines: list[str] = []

    def emit(t: float, key: str, value=None) -> None:
        tail = key if value is None else f"{key}: {json.dumps(value)}"
        lines.append(f":::MLPv0.5.0 {benchmark} {t:.9f} (train.py:{100 + len(lines)}) {tail}")

    duration = minutes * 60.0
    emit(start_s - rng.uniform(1.0, 30.0), "run_clear_caches")
    emit(start_s, "run_start")
    emit(start_s + 0.001, "run_set_random_seed", seed)
    emit(start_s + 0.002, "input_batch_size", 256)
    emit(start_s + 0.003, "opt_name", "sgd")
    emit(start_s + 0.004, "opt_learning_rate", 0.1)
    emit(start_s + 0.005, "eval_target", target)
    emit(start_s + 0.006, "train_loop")
    epochs_per_eval = rng.randint(1, 4)
    for k, metric in enumerate(_curve(rng, target, evals, success), start=1):
        t = start_s + duration * k / evals - 0.01
        epoch = k * epochs_per_eval
        emit(t - 1.0, "train_epoch", epoch)
        emit(t - 0.5, "eval_start")
        emit(t - 0.002, "eval_stop")
        emit(t, "eval_accuracy", {"epoch": epoch, "value": metric})
    emit(start_s + duration, "run_stop", {"success": success})
    emit(start_s + duration + 0.5, "run_final")
    return "\n".join(lines) + "\n"
