"""summarize(): reduce a ParsedLog to one run's timing, status, eval curve and settings."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .events import Event, ParsedLog

HYPERPARAMETER_KEYS = frozenset(
    {
        "global_batch_size",
        "local_batch_size",
        "input_batch_size",
        "train_samples",
        "eval_samples",
        "gradient_accumulation_steps",
        "max_sequence_length",
        "max_samples",
        "max_steps",
        "evaluation_frequency",
        "epoch_count",
        "first_epoch_num",
        "init_checkpoint_step",
        "num_image_candidates",
        "virtual_losses",
        "model_l2_regularization",
        "model_exclude_bn_from_l2",
    }
)
HYPERPARAMETER_PREFIXES = ("opt_", "lars_", "lamb_", "sgd_", "lora_", "model_bn_")
TARGET_KEYS = ("eval_target", "target_accuracy")  # v0.5/v0.6, v1.0+
SUBMISSION_FIELDS = ("benchmark", "org", "division", "status", "platform")
_KEY_EVENTS = ("init_start", "init_stop", "run_start", "run_stop")


def reads(key: str) -> bool:
    """True when summarize looks at events of this key (it also looks for "benchmark" in every event's metadata)."""
    return (
        key in _KEY_EVENTS
        or key == "eval_accuracy"
        or key.startswith("submission_")
        or key in TARGET_KEYS
        or key in ("seed", "run_set_random_seed")
        or key in HYPERPARAMETER_KEYS
        or key.startswith(HYPERPARAMETER_PREFIXES)
    )


@dataclass
class RunSummary:
    run_start: float | None = None
    run_stop: float | None = None
    init_stop: float | None = None
    status: str | None = None
    success: bool = False
    failure_reason: str = ""
    time_to_train_s: float | None = None
    eval_curve: list[tuple[float, float]] = field(default_factory=list)
    eval_x: str = "epoch"
    quality_target: float | None = None
    hyperparameters: dict = field(default_factory=dict)
    seed: Any = None
    submission: dict = field(default_factory=dict)
    first_line: dict = field(default_factory=dict)


def finite_number(value) -> float | None:
    """A finite float from a number or numeric string (not bool), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):  # NVIDIA v0.6 Transformer logs eval_accuracy as "24.48..."
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    return None


def _status(event: Event) -> str | None:
    """The status written on a run_stop line, if any."""
    status = event.metadata.get("status")
    if status is None and isinstance(event.value, dict):
        status = event.value.get("status")
        if status is None and "success" in event.value:  # v0.5: {"success": true|"true"|false}
            ok = event.value["success"]
            ok = ok.strip().lower() == "true" if isinstance(ok, str) else bool(ok)
            status = "success" if ok else "aborted"
    return None if status is None else str(status)


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def summarize(
    log: ParsedLog,
    *,
    require_init_stop_before_run_start: bool = False,
    quality_target: float | None = None,
    higher_is_better: bool = True,
) -> RunSummary:
    """Summarize one run; failure_reason explains the first check that failed."""
    s = RunSummary()
    seen = _read_events(log, s)
    s.submission = {name: seen.submission.get(name, "") for name in SUBMISSION_FIELDS}
    s.first_line = {k: ev.line for k, ev in seen.firsts.items()}
    start, init_stop = seen.firsts.get("run_start"), seen.firsts.get("init_stop")
    run_stop = seen.run_stop
    if run_stop is None and start is not None and seen.eval_result is not None:
        run_stop = _stop_of_eval_result(start, seen.eval_result)
    if run_stop is not None:
        s.first_line["run_stop"] = run_stop.line
    s.run_start = start.time_s if start else None
    s.run_stop = run_stop.time_s if run_stop else None
    s.init_stop = init_stop.time_s if init_stop else None
    s.status = _status(run_stop) if run_stop else None
    if start and run_stop and math.isfinite(start.time_s) and math.isfinite(run_stop.time_s):
        s.time_to_train_s = run_stop.time_s - start.time_s
    s.quality_target = quality_target if quality_target is not None else seen.log_target

    # Eval curve: samples when the log counts samples anywhere, else epochs.
    evals = seen.evals
    s.eval_x = (
        "samples"
        if any(finite_number(xs.get("samples_count")) is not None for xs, _, _ in evals)
        else "epoch"
    )
    x_key = "samples_count" if s.eval_x == "samples" else "epoch_num"
    s.eval_curve = [(x, m) for xs, m, _ in evals if (x := finite_number(xs.get(x_key))) is not None]

    s.failure_reason = _failure(
        s,
        log,
        start,
        run_stop,
        init_stop,
        evals,
        require_init_stop_before_run_start,
        higher_is_better,
    )
    s.success = not s.failure_reason
    return s


@dataclass
class _Seen:
    """What one pass over a log's events found, before the summary is worked out from it."""

    firsts: dict[str, Event]  # the first init_start, init_stop, run_start, run_stop
    run_stop: Event | None  # the last run_stop
    eval_result: Event | None  # the last eval_result (logs without run_stop)
    log_target: float | None
    evals: list[tuple[dict, Any, Event]]  # (x candidates, metric, event)
    submission: dict[str, str]


def _read_events(log: ParsedLog, s: RunSummary) -> _Seen:
    """One pass over the events: what the summary is worked out from, and the seed and
    hyperparameters, which go into `s` as they are."""
    firsts: dict[str, Event] = {}
    run_stop: Event | None = None
    eval_result: Event | None = None
    log_target = None
    evals: list[tuple[dict, Any, Event]] = []
    submission: dict[str, str] = {}
    benchmark_hint = ""

    for ev in log.events:
        key = ev.key
        if key in _KEY_EVENTS:
            firsts.setdefault(key, ev)
            if key == "run_stop":
                run_stop = ev  # the last one wins
        elif key == "eval_result":
            eval_result = ev  # the last one wins, as run_stop's
        elif key == "eval_accuracy":
            value, xs = ev.value, ev.metadata
            if isinstance(value, dict):  # v0.5: {"value": v, "epoch": e}
                xs = {**xs, "epoch_num": value.get("epoch")}
                value = value.get("value")
            metric = finite_number(value)
            if metric is not None:
                evals.append((xs, metric, ev))
        elif key.startswith("submission_"):
            name = key[len("submission_") :]
            if name in SUBMISSION_FIELDS and name not in submission and ev.value not in (None, ""):
                submission[name] = str(ev.value)
        elif key in TARGET_KEYS:
            if log_target is None:
                log_target = finite_number(ev.value)
        elif key == "seed" or key == "run_set_random_seed":
            if s.seed is None:
                s.seed = ev.value
        elif key in HYPERPARAMETER_KEYS or key.startswith(HYPERPARAMETER_PREFIXES):
            # v0.5 TPU logs leave unresolved "DEFERRED: <uuid>" placeholders; a later real value wins.
            if not (isinstance(ev.value, str) and ev.value.startswith("DEFERRED:")):
                s.hyperparameters.setdefault(key, ev.value)
        if not benchmark_hint and "benchmark" in ev.metadata:
            benchmark_hint = str(ev.metadata["benchmark"])

    if not submission.get("benchmark") and benchmark_hint:
        submission["benchmark"] = benchmark_hint  # v0.5 and Alibaba name it on every line
    return _Seen(firsts, run_stop, eval_result, log_target, evals, submission)


def _stop_of_eval_result(start: Event, eval_result: Event) -> Event | None:
    """The run_stop of a v0.6 MiniGo log, which has none: its eval_result names the model that reached the target
    and the seconds from run_start to that model's save_model (metadata timestamp), the time to train that
    round's rules take (mlperf-logging's training_0.6.0/minigo.yaml checks it against save_model)."""
    seconds = finite_number(eval_result.metadata.get("timestamp"))
    if seconds is None or seconds < 0 or not math.isfinite(start.time_s):
        return None
    return Event("run_stop", None, start.time_s + seconds, eval_result.line, {})


def _failure(
    s: RunSummary,
    log: ParsedLog,
    start,
    stop,
    init_stop,
    evals,
    require_init: bool,
    higher_is_better: bool,
) -> str:
    if start is None:
        return f"run_start is missing (line count {log.line_count})"
    if stop is None:
        return f"run_stop is missing (line count {log.line_count})"
    for ev in (start, stop):
        if not math.isfinite(ev.time_s):
            return f"{ev.key} at line {ev.line} has the time {ev.time_s!r}, not a finite number"
    if stop.time_s < start.time_s:
        return f"run_stop at line {stop.line} comes before run_start at line {start.line}"
    if s.status is not None and s.status.strip().lower() != "success":
        return f"run_stop status is {s.status!r} (line {stop.line})"
    if require_init:
        if init_stop is None:
            return f"init_stop is missing (line count {log.line_count})"
        if (start.time_s, start.line) < (init_stop.time_s, init_stop.line):
            return f"run_start at line {start.line} comes before init_stop at line {init_stop.line}"
    if s.status is None and s.quality_target is not None and evals:
        # No status written (NVIDIA v0.5 MXNet, Alibaba): judge by the last eval.
        _, last, ev = evals[-1]
        target = s.quality_target
        reached = last >= target if higher_is_better else last <= target
        if not reached:
            return (
                f"run_stop has no status and the last eval_accuracy {_fmt(last)} (line {ev.line}) "
                f"did not reach the quality target {_fmt(target)}"
            )
    return ""
