"""Energy to train (MLPerf Power), as mlperf-logging's result summarizer defines it. Plain functions, no Django.

A run's energy is the sum over its nodes and switches:
- a node: its mean power over the measurement (the readings between `power_measurement_start` and
  `power_measurement_stop`, each reading held since the one before, times `conversion_eff`) times the
  run's time to train (`run_stop` - `run_start`);
- a switch: its `interconnect_power_est` (watts, times `conversion_eff`) times the time to train.
A result's energy score is the mean energy of the runs its time score counts (the olympic mean: the
fastest and the slowest run by time dropped), times the same RCP factor as its time.

The portal's rule for a stop that is no stop (MEASUREMENT_END): where `power_measurement_stop` is
logged at or before `power_measurement_start` (14 of the 24 power results of v4.0 log it with the
start's timestamp, then the readings), or not at all, the measurement ends at the last reading. That is
what mlperf-logging 4.1.68 does for a missing stop; for a stop at the start it divides by zero.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import repeat
from operator import mul, sub, truediv

from .logs.power import PowerLog

STOP_AT_START = "stop-at-start"  # what NodeEnergy.assumed names
POWER_SINCE = (4, 0)  # the first Training round with a power track


def has_power_track(ruleset: str) -> bool:
    """Whether the round's rules know power results: Training v4.0 and later."""
    try:
        return tuple(int(part) for part in ruleset.split(".")[:2]) >= POWER_SINCE
    except ValueError:
        return False


def power_of_runs(
    power_files: dict[str, list[str]], run_paths: list[str]
) -> tuple[list[list[str]], list[str]]:
    """(each run's power files, in run order; the power folders no run log has), matching a power folder
    to the run log of the same name (power/result_3/ to result_3.txt)."""
    stems = [path.rpartition("/")[2].rpartition(".")[0] for path in run_paths]
    taken = set(stems)
    return [sorted(power_files.get(stem, [])) for stem in stems], sorted(set(power_files) - taken)


@dataclass(frozen=True)
class NodeEnergy:
    joules: float | None  # None: no reading inside the measurement
    end_ms: int | None  # where the measurement ended, as used
    assumed: str = ""  # STOP_AT_START or "no-stop" where the end is the last reading


@dataclass(frozen=True)
class Measurement:
    """The readings of a node inside its measurement: positions lo..hi (excluded) of its time-ordered
    readings, and where the measurement ends."""

    lo: int
    hi: int
    end_ms: int | None
    assumed: str = ""  # STOP_AT_START or "no-stop" where the end is the last reading

    @property
    def count(self) -> int:
        return self.hi - self.lo


def measurement(log: PowerLog) -> Measurement:
    """Which readings count: from `power_measurement_start` on, up to `power_measurement_stop` (a
    reading at the stop's millisecond counts, as it does in mlperf-logging where it is logged before
    the stop)."""
    if log.start_ms is None:
        return Measurement(0, 0, None)
    lo = bisect_left(log.times, log.start_ms)
    if log.stop_ms is not None and log.stop_ms > log.start_ms:
        return Measurement(lo, bisect_right(log.times, log.stop_ms), log.stop_ms)
    hi = len(log.times)
    end = log.times[-1] if hi > lo else None
    return Measurement(lo, hi, end, STOP_AT_START if log.stop_ms is not None else "no-stop")


def node_energy(log: PowerLog, time_to_train_ms: float) -> NodeEnergy:
    """A node's energy over the run, in joules: its mean power over the measurement times the time to
    train. Each reading holds from the reading before (the first from the start)."""
    inside = measurement(log)
    if not inside.count or inside.end_ms is None or inside.end_ms <= log.start_ms:
        return NodeEnergy(None, inside.end_ms, inside.assumed)
    times = log.times[inside.lo : inside.hi]
    held = map(sub, times, [log.start_ms, *times[:-1]])  # how long each reading holds, ms
    watt_ms = sum(map(mul, log.watts[inside.lo : inside.hi], held))
    mean_w = watt_ms / (inside.end_ms - log.start_ms)
    return NodeEnergy(
        log.conversion_eff * mean_w * time_to_train_ms / 1000, inside.end_ms, inside.assumed
    )


def switch_energy(log: PowerLog, time_to_train_ms: float) -> float | None:
    """A switch's energy over the run, in joules: its estimated power times the time to train."""
    if log.interconnect_w is None:
        return None
    return log.conversion_eff * log.interconnect_w * time_to_train_ms / 1000


def score_energy(
    energies: list[float | None], counted: list[int], scaling_factor: float = 1.0
) -> tuple[float | None, str]:
    """(the result's energy score in joules, or None; why there is none).

    energies: each run's energy in run order (None where it has none); counted: the positions of the
    runs its time score averages."""
    if not counted:
        return None, "The result has no time score, so no energy score."
    missing = [position for position in counted if energies[position] is None]
    if missing:
        return None, (
            f"{len(missing)} of the {len(counted)} runs that the score counts "
            f"ha{'s' if len(missing) == 1 else 've'} no energy; the findings say why."
        )
    return sum(energies[position] for position in counted) / len(counted) * scaling_factor, ""


def trace(log: PowerLog, origin_ms: float, points: int) -> dict[str, list[float]]:
    """The node's readings as {"s": [seconds from origin, ...], "w": [watts, ...]}, at most `points` of
    them (every k-th reading), for a plot. Two lists, not a pair per point: v4.0's 100,000 points per
    submitter as small lists made the worker's garbage collector go through all its objects twice more
    per bundle (0.15 s CPU of smc-ac-power's ingest)."""
    step = max(1, -(-len(log.times) // max(points, 1)))
    seconds = map(truediv, map(sub, log.times[::step], repeat(origin_ms)), repeat(1000))
    return {"s": list(seconds), "w": log.watts[::step]}
