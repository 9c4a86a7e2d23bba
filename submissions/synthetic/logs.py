"""Deterministic synthetic MLPerf result logs (v5.1 `:::MLLOG` and v0.5 `:::MLPv0.5.0` text) for demos and tests.

For the benchmarks of training v5.1 (BENCHMARKS below) a log from mllog_run passes what the
portal checks with mlperf-logging's 5.1.0 rules: the closed-division compliance configs
(closed_<benchmark>.yaml, closed_common.yaml, common.yaml) and the RCP check, whose
convergence point (samples_count, or epoch_num, of the last eval before a successful run_stop)
is drawn from the benchmark's `converge` range: at or above the mean of the reference
convergence points for the logged global_batch_size, so that no normalisation is needed.
"""

from __future__ import annotations

import json
import random

# Settings for benchmarks without a BENCHMARKS entry (they are not checked against any rules).
_DEFAULT_HP = {
    "global_batch_size": 256,
    "gradient_accumulation_steps": 1,
    "train_samples": 1_281_167,
    "opt_name": "sgd",
    "opt_base_learning_rate": 0.1,
    "opt_learning_rate_warmup_steps": 100,
}

# One dict per training v5.1 benchmark. Key names and values are those of real v5.1 result logs
# (NVIDIA's, AMD's for llama2_70b_lora), chosen to satisfy mlperf-logging 5.1.0's
# closed_<benchmark>.yaml; the global_batch_size is one that has an RCP (rcp_checker/training_5.1.0).
#   target, higher_is_better  the round's quality target and its direction (llama*, flux1: a loss)
#   first_metric              eval_accuracy at the first eval of a real log (the curve starts there)
#   x                         "samples": evals and the RCP count samples_count; "epochs": epoch_num
#   first_eval, eval_every    the eval schedule, in x
#   converge                  (low, high) in x: where successful runs reach the target; low is the
#                             RCP mean for the global_batch_size below, high about its slowest run
#   blocks                    "block": block_start/stop around each eval interval (samples_count);
#                             "epoch": epoch_start/stop around each epoch, one eval after each;
#                             "run": one epoch_start at run_start, one epoch_stop at the end
#   hyperparameters           logged once each, in this order, before target_accuracy
BENCHMARKS: dict[str, dict] = {
    "llama31_405b": {
        "target": 5.6,
        "higher_is_better": False,
        "first_metric": 5.758,
        "x": "samples",
        "first_eval": 276_480,
        "eval_every": 18_432,
        "converge": (313_344, 331_776),
        "blocks": "block",
        "hyperparameters": {
            "global_batch_size": 1152,
            "gradient_accumulation_steps": 72,
            "max_sequence_length": 8192,
            "eval_samples": 5760,
            "train_samples": 1_574_207_408,
            "init_checkpoint_step": 0,
            "opt_name": "adamw",
            "opt_base_learning_rate": 8e-05,
            "opt_adamw_beta_1": 0.9,
            "opt_adamw_beta_2": 0.95,
            "opt_adamw_epsilon": 1e-05,
            "opt_adamw_weight_decay": 0.1,
            "opt_gradient_clip_norm": 1.0,
            "opt_end_learning_rate": 8e-07,
            "opt_learning_rate_warmup_steps": 8000,
            "opt_learning_rate_decay_steps": 1_192_000,
            "max_steps": 600,
            "opt_learning_rate_decay_schedule": "cosine with linear warmup",
        },
    },
    "llama31_8b": {
        "target": 3.3,
        "higher_is_better": False,
        "first_metric": 5.287,
        "x": "samples",
        "first_eval": 12_288,
        "eval_every": 12_288,
        "converge": (161_110, 184_320),
        "blocks": "block",
        "hyperparameters": {
            "global_batch_size": 16,
            "gradient_accumulation_steps": 1,
            "max_sequence_length": 8192,
            "eval_samples": 1024,
            "train_samples": 1_574_207_408,
            "init_checkpoint_step": 0,
            "opt_name": "adamw",
            "opt_base_learning_rate": 0.0004,
            "opt_adamw_beta_1": 0.9,
            "opt_adamw_beta_2": 0.95,
            "opt_adamw_epsilon": 1e-05,
            "opt_adamw_weight_decay": 0.1,
            "opt_gradient_clip_norm": 1.0,
            "opt_end_learning_rate": 4e-05,
            "opt_learning_rate_warmup_steps": 16,
            "opt_learning_rate_decay_steps": 1_199_984,
            "max_steps": 1_200_000,
            "opt_learning_rate_decay_schedule": "cosine with linear warmup",
        },
    },
    "llama2_70b_lora": {
        "target": 0.925,
        "higher_is_better": False,
        "first_metric": 0.9383,
        "x": "samples",
        "first_eval": 1536,
        "eval_every": 384,
        "converge": (3179, 3840),
        "blocks": "block",
        "hyperparameters": {
            "global_batch_size": 8,
            "train_samples": 3901,
            "eval_samples": 173,
            "opt_learning_rate_warmup_factor": 0.0,
            "opt_adamw_weight_decay": 0.0001,
            "opt_gradient_clip_norm": 0.3,
            "gradient_accumulation_steps": 1,
            "opt_learning_rate_training_steps": 1024,
            "opt_base_learning_rate": 0.0004,
            "lora_rank": 16,
            "lora_alpha": 32,
        },
    },
    "flux1": {
        "target": 0.586,
        "higher_is_better": False,
        "first_metric": 0.6977,
        "x": "samples",
        "first_eval": 262_144,
        "eval_every": 262_144,
        "converge": (8_752_697, 9_961_472),
        "blocks": "block",
        "hyperparameters": {
            "global_batch_size": 1024,
            "train_samples": 1_099_776,
            "eval_samples": 29_696,
            "evaluation_frequency": 262_144,
            "gradient_accumulation_steps": 1,
            "opt_name": "adamw",
            "opt_learning_rate_warmup_steps": 0,
            "opt_adamw_beta_1": 0.9,
            "opt_adamw_beta_2": 0.95,
            "opt_adamw_epsilon": 1e-08,
            "opt_adamw_weight_decay": 0.1,
            "opt_base_learning_rate": 0.000185,
            "opt_gradient_clip_norm": 1.0,
            "opt_learning_rate_training_steps": -1,
        },
    },
    "dlrm_dcnv2": {
        "target": 0.80275,
        "higher_is_better": True,
        "first_metric": 0.7898,
        "x": "epochs",
        "first_eval": 0.05,
        "eval_every": 0.05,
        "converge": (0.7615, 0.9),
        "blocks": "run",
        "hyperparameters": {
            "global_batch_size": 55_296,
            "opt_name": "adagrad",
            "opt_base_learning_rate": 0.004,
            "opt_adagrad_learning_rate_decay": 0,
            "opt_weight_decay": 0,
            "opt_adagrad_initial_accumulator_value": 0.0,
            "opt_adagrad_epsilon": 1e-08,
            "opt_learning_rate_warmup_steps": 0,
            "opt_learning_rate_decay_start_step": 0,
            "opt_learning_rate_decay_steps": 0,
            "gradient_accumulation_steps": 1,
            "train_samples": 4_195_197_692,
            "eval_samples": 89_137_319,
        },
    },
    "rgat": {
        "target": 0.72,
        "higher_is_better": True,
        "first_metric": 0.666,
        "x": "epochs",
        "first_eval": 0.05,
        "eval_every": 0.05,
        "converge": (0.939, 1.0),
        "blocks": "run",
        "hyperparameters": {
            "global_batch_size": 32_768,
            "gradient_accumulation_steps": 1,
            "opt_name": "adam",
            "opt_base_learning_rate": 0.002,
            "train_samples": 94_605_581,
            "eval_samples": 788_379,
        },
    },
    "retinanet": {
        "target": 0.34,
        "higher_is_better": True,
        "first_metric": 0.2418,
        "x": "epochs",
        "first_eval": 1,
        "eval_every": 1,
        "converge": (4, 4),
        "blocks": "epoch",
        "hyperparameters": {
            "global_batch_size": 256,
            "epoch_count": 8,
            "first_epoch_num": 0,
            "opt_name": "adam",
            "opt_base_learning_rate": 8.5e-05,
            "opt_weight_decay": 0,
            "opt_learning_rate_warmup_epochs": 0,
            "opt_learning_rate_warmup_factor": 0.001,
            "gradient_accumulation_steps": 1,
            "train_samples": 4572,
            "eval_samples": 97,
        },
    },
}


def _rng(*parts) -> random.Random:
    # A str seed is hashed with SHA-512, so runs are reproducible regardless of PYTHONHASHSEED.
    return random.Random("|".join(repr(p) for p in parts))


def _curve(rng: random.Random, target: float, evals: int, success: bool) -> list[float]:
    """Metrics rising towards target; the last one reaches it only when success (the v0.5 logs)."""
    last = target * (1 + rng.uniform(0.001, 0.01)) if success else target * rng.uniform(0.9, 0.99)
    first = target * rng.uniform(0.3, 0.6)
    out = []
    for k in range(1, evals + 1):
        frac = (k / evals) ** 0.7
        value = first + (last - first) * frac
        out.append(
            value if k == evals else min(value, target * 0.999)
        )  # only the last eval may hit target
    return out


def _schedule(
    spec: dict | None, rng: random.Random, gbs: int, train_samples: int, evals: int | None
) -> list[float]:
    """The eval positions (in the spec's x), the last one where the run stops."""
    if spec is None:
        per_eval = gbs * max(
            1, round(train_samples * rng.uniform(0.5, 4.0) / gbs)
        )  # 0.5-4 epochs per eval
        return [per_eval * k for k in range(1, (evals or 5) + 1)]
    if spec["x"] == "samples":

        def snap(x):  # whole steps
            return max(gbs, round(x / gbs) * gbs)
    else:

        def snap(x):
            return round(x, 6)

    first, every = spec["first_eval"], spec["eval_every"]
    low, high = spec["converge"]
    count = int((high - first) / every + 1e-9) + 1
    points = sorted({snap(first + k * every) for k in range(max(count, 1))})
    reaching = [x for x in points if x >= low - 1e-9] or points[-1:]
    last = rng.choice(reaching)
    points = [x for x in points if x <= last]
    if evals is not None and evals > 0:
        if evals <= len(points):
            points = points[-evals:]  # a log that starts evaluating late (as llama31_405b's do)
        else:
            points = sorted({snap(last * k / evals) for k in range(1, evals + 1)})
    return points


def _metrics(
    rng: random.Random,
    spec: dict | None,
    target: float,
    higher: bool,
    xs: list[float],
    success: bool,
) -> list[float]:
    """eval_accuracy at each x: from the benchmark's first value towards the target; only the last of a
    successful run reaches it (>= target when higher is better, <= target when lower is)."""
    if spec is not None and spec["target"]:
        ratio = spec["first_metric"] / spec["target"]
        first = target * (
            ratio if higher == spec["higher_is_better"] else 2 - ratio
        )  # mirrored if told otherwise
        x0 = spec["first_eval"]
    else:
        first = target * (rng.uniform(0.3, 0.6) if higher else rng.uniform(1.3, 1.6))
        x0 = xs[0]
    delta = first - target  # < 0 when higher is better
    last = (
        target - delta * rng.uniform(0.002, 0.03)
        if success
        else target + delta * rng.uniform(0.03, 0.3)
    )
    margin, span = abs(delta) * 0.002, xs[-1] - x0
    out = []
    for k, x in enumerate(xs):
        if k == len(xs) - 1:
            out.append(last)
            continue
        frac = max(0.0, (x - x0) / span) ** 0.5 if span > 0 else 1.0
        value = first + (last - first) * frac + abs(delta) * rng.uniform(-0.01, 0.01)
        out.append(min(value, target - margin) if higher else max(value, target + margin))
    return out


class _Records:
    """The lines of one log: MLLOG records, with the odd line of noise that real logs have."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def emit(
        self,
        t: int,
        key: str,
        value=None,
        kind: str = "POINT_IN_TIME",
        prefix: str = "",
        **metadata,
    ) -> None:
        record = {
            "namespace": "",
            "time_ms": t,
            "event_type": kind,
            "key": key,
            "value": value,
            "metadata": {"file": "train.py", "lineno": 100 + len(self.lines), **metadata},
        }
        self.lines.append(prefix + ":::MLLOG " + json.dumps(record))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class _Progress:
    """Where training is: the benchmark's x (samples or epochs) as samples, and as an eval's metadata."""

    def __init__(self, spec: dict | None, division: str, hp: dict) -> None:
        self.unit = spec["x"] if spec else "samples"
        self.gbs = max(1, int(hp.get("global_batch_size") or 1))
        self.train_samples = max(1, int(hp.get("train_samples") or 1))
        # Open-division rules ask for epoch_num on eval_accuracy whatever the benchmark counts in.
        self.epoch_too = self.unit == "samples" and (spec is None or division == "open")

    def samples_at(self, x) -> int:
        return (
            int(x)
            if self.unit == "samples"
            else round(x * self.train_samples / self.gbs) * self.gbs
        )

    def where(self, x) -> dict:
        if self.unit == "epochs":
            return {"epoch_num": x}
        md = {"samples_count": x}
        if self.epoch_too:
            md["epoch_num"] = round(x / self.train_samples, 4)
        return md


def mllog_run(
    *,
    benchmark: str,
    org: str,
    division: str,
    status: str,
    platform: str,
    seed: int,
    start_ms: int,
    minutes: float,
    target: float,
    success: bool = True,
    evals: int | None = None,
    hyperparameters: dict | None = None,
    higher_is_better: bool | None = None,
) -> str:
    """Text of a v5.1-style result file whose run_start is at start_ms and run_stop `minutes` later.

    `status` is the logged submission_status ("onprem", "cloud", "preview", "research"). For a
    benchmark of BENCHMARKS the settings, eval schedule, metric direction and convergence follow its
    entry (`hyperparameters` override single settings); `evals` keeps the last that many evals of
    the schedule (None: all of them). higher_is_better=None takes the benchmark's direction.
    """
    spec = BENCHMARKS.get(benchmark)
    submission = {
        "benchmark": benchmark,
        "org": org,
        "division": division,
        "status": status,
        "platform": platform,
    }
    overrides = sorted((hyperparameters or {}).items())
    rng = _rng(
        "mllog", *submission.values(), seed, start_ms, minutes, target, success, evals, overrides
    )
    hp = {**(spec["hyperparameters"] if spec else _DEFAULT_HP), **(hyperparameters or {})}
    higher = (
        (spec["higher_is_better"] if spec else True)
        if higher_is_better is None
        else higher_is_better
    )
    log = _Records()
    init_start = start_ms - rng.randint(30_000, 180_000)
    _initialization(log, init_start, start_ms, submission, seed, hp, target)
    progress = _Progress(spec, division, hp)
    xs = _schedule(spec, rng, progress.gbs, progress.train_samples, evals)
    metrics = _metrics(rng, spec, target, higher, xs, success)
    stop = start_ms + round(minutes * 60_000)
    blocks = spec["blocks"] if spec else "block"
    _training(log, rng, blocks, progress, start_ms, stop, xs, metrics)
    log.emit(
        stop,
        "run_stop",
        kind="INTERVAL_END",
        status="success" if success else "aborted",
        **progress.where(xs[-1]),
    )
    log.lines.append("+ ret_code=0")
    return log.text()


def _initialization(
    log: _Records, init_start: int, start_ms: int, submission: dict, seed: int, hp: dict, target
) -> None:
    """From clearing the cache to run_start: what was submitted, the seed and the settings."""
    log.emit(init_start - 5, "cache_clear", True)
    log.emit(init_start, "init_start", kind="INTERVAL_START")
    for name, value in submission.items():
        log.emit(init_start + 1, f"submission_{name}", value)
    log.emit(init_start + 2, "seed", seed)
    for key, value in hp.items():
        log.emit(init_start + 2, key, value)
    log.emit(init_start + 2, "target_accuracy", target)
    log.lines.append(
        f"Initialization done in {(start_ms - init_start) / 1000:.1f} s"
    )  # noise, as real logs have
    log.emit(start_ms - 1, "init_stop", kind="INTERVAL_END")
    log.emit(start_ms, "run_start", kind="INTERVAL_START")


def _training(
    log: _Records,
    rng: random.Random,
    blocks: str,
    progress: _Progress,
    start_ms: int,
    stop: int,
    xs: list,
    metrics: list[float],
) -> None:
    """The run's blocks (or epochs) and evals, at times spread over the run as x grows."""
    if blocks == "run":
        log.emit(start_ms, "epoch_start", kind="INTERVAL_START", epoch_num=0)
    t_prev, x_prev, samples_prev = start_ms, 0, 0
    for k, (x, metric) in enumerate(zip(xs, metrics)):
        t = start_ms + round((stop - start_ms) * x / xs[-1])
        samples = progress.samples_at(x)
        step = samples // progress.gbs
        if blocks == "block":
            log.emit(
                t_prev,
                "block_start",
                kind="INTERVAL_START",
                samples_count=samples - samples_prev,
                step=samples_prev // progress.gbs,
            )
        elif blocks == "epoch":
            log.emit(t_prev, "epoch_start", kind="INTERVAL_START", epoch_num=x_prev)
        log.emit(
            max(t_prev, t - 3),
            "tracked_stats",
            {"train_loss": round(rng.uniform(0.5, 3.0), 4)},
            step=step,
            samples_count=samples,
        )
        if blocks == "block":
            log.emit(
                max(t_prev, t - 2),
                "block_stop",
                kind="INTERVAL_END",
                samples_count=samples - samples_prev,
                step=step,
            )
        elif blocks == "epoch":
            log.emit(max(t_prev, t - 2), "epoch_stop", kind="INTERVAL_END", epoch_num=x_prev)
        _eval(
            log,
            max(t_prev, t - 1),
            t,
            progress.where(x),
            metric,
            prefix="0: " if k % 2 == 0 else "",
        )
        t_prev, x_prev, samples_prev = t, x, samples
    if blocks == "run":
        log.emit(stop, "epoch_stop", kind="INTERVAL_END", epoch_num=xs[-1])


def _eval(log: _Records, started: int, t: int, where: dict, metric: float, prefix: str) -> None:
    # srun-style "0: " prefixes appear on real multi-node logs.
    log.emit(started, "eval_start", kind="INTERVAL_START", prefix=prefix, **where)
    log.emit(t, "eval_accuracy", metric, **where)
    log.emit(t, "eval_stop", kind="INTERVAL_END", **where)


def mlperf05_run(
    *,
    benchmark: str,
    seed: int,
    start_s: float,
    minutes: float,
    target: float,
    success: bool = True,
    evals: int = 5,
) -> str:
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
