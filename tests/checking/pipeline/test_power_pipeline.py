"""Power logs through the pipeline, on a generated bundle: a power result gets its energy, and each kind of
bad power log ends with its own rule, no energy score and the time score of the same runs without power logs.
Tasks run in-process."""

import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard.models import Result
from submissions.models import Finding
from submissions.synthetic.bundles import SystemSpec, write_bundle

# Every test here commits its writes: eager tasks run in on_commit hooks.
pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]
TIMES = [10.0, 12.0, 11.0, 13.0, 9.0]  # minutes; the counted runs: 10, 11, 12
WATTS = 5000.0  # every node, every reading: a node's energy is 5 kW x the time to train


def mllog(key, time_ms, value="null"):
    record = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key}
    return ":::MLLOG " + json.dumps(record | {"value": value, "metadata": ""})


def node_log(start_ms, stop_ms, defect=""):
    """A node measured from a minute before run_start to a minute after run_stop, every 2 s; `defect`
    spoils it in one way."""
    every = 30_000 + 60_000 if defect == "gap" else 2000
    t0 = start_ms - 60_000 + (3_600_000 if defect == "clock" else 0)
    end = stop_ms + 60_000 - (stop_ms - start_ms) // 2 * (defect == "window")
    lines = [] if defect == "no-start" else [mllog("power_measurement_start", t0)]
    t, i = t0, 0
    while t + every <= end + (3_600_000 if defect == "clock" else 0):
        t += every
        value = (
            {"negative": -3.0, "absurd": 9e6, "unreadable": "n/a"}.get(defect) if i == 5 else None
        )
        lines.append(mllog("power_reading", t, WATTS if value is None else value))
        i += 1
    lines.append(mllog("power_measurement_stop", t0 if defect == "stop-at-start" else t))
    return "\n".join(lines) + "\n"


def run_window(log: Path) -> tuple[int, int]:
    text = log.read_text()
    start = int(re.search(r'"time_ms": ?(\d+)[^\n]*"key": ?"run_start"', text).group(1))
    stop = int(re.search(r'"time_ms": ?(\d+)[^\n]*"key": ?"run_stop"', text).group(1))
    return start, stop


DEFECTS = {
    "sound": "",
    "stop": "stop-at-start",
    "missing": "node-missing",
    "negative": "negative",
    "absurd": "absurd",
    "unreadable": "unreadable",
    "nostart": "no-start",
    "clock": "clock",
    "window": "window",
    "gap": "gap",
    "nologs": "no-logs",
    "noestimate": "no-estimate",
}
# The rule each defect's finding has, as the report shows it.
RULE_OF = {
    "node-missing": "power.node-missing",
    "negative": "power.negative-reading",
    "absurd": "power.absurd-reading",
    "unreadable": "power.unreadable-reading",
    "no-start": "power.no-start",
    "clock": "power.clock",
    "window": "power.window-not-covered",
    "gap": "power.gap",
    "no-estimate": "power.no-switch-estimate",
    "stop-at-start": "power.stop-at-start",
    "no-logs": "power.no-logs",
}


@pytest.fixture
def power_bundle(tmp_path):
    """One system per defect, two nodes each, the same run times; power logs on every run."""
    systems = [SystemSpec(name, nodes=2, results={"retinanet": TIMES}) for name in DEFECTS]
    root = write_bundle(tmp_path / "src", "Acme", systems, {"retinanet": 0.34})
    for name, defect in DEFECTS.items():
        folder = root / "results" / name / "retinanet"
        for log in sorted(folder.glob("result_*.txt")):
            if defect == "no-logs":
                continue
            power = folder / "power" / log.stem
            power.mkdir(parents=True)
            start, stop = run_window(log)
            for node in (0, 1):
                if defect == "node-missing" and node == 1:
                    continue
                (power / f"node_{node}.txt").write_text(node_log(start, stop, defect))
            estimate = mllog("interconnect_power_est", start, 400)
            if defect == "no-estimate":
                estimate = mllog("conversion_eff", start, 1)
            (power / "sw_0.txt").write_text(estimate + "\n")
        if defect == "no-logs":  # one other run has a power folder: the result is a power result
            (folder / "power" / "result_0").mkdir(parents=True)
            start, stop = run_window(folder / "result_0.txt")
            (folder / "power" / "result_0" / "node_0.txt").write_text(node_log(start, stop))
    return root


def test_power_results_get_energy_and_each_bad_power_log_its_rule(rounds, power_bundle):
    call_command("ingest", str(power_bundle), "--round", "training-v5.1")
    results = {r.system.key: r for r in Result.objects.select_related("system")}
    sound = results["sound"]
    assert sound.power_result and sound.score_s == pytest.approx(11 * 60, abs=1)
    # Two nodes at 5 kW and a 400 W switch, over each counted run: the mean of 10, 11 and 12 minutes.
    assert sound.energy_j == pytest.approx((2 * WATTS + 400) * sound.score_s, rel=1e-3)
    assert not Finding.objects.filter(result=sound, rule__startswith="power.").exists()
    for name, defect in DEFECTS.items():
        result = results[name]
        assert result.score_s == sound.score_s, name  # a bad power log never costs the time
        rules = set(Finding.objects.filter(result=result).values_list("rule", flat=True))
        assert RULE_OF[defect] in rules if defect else True, (name, rules)
        if name in ("sound", "stop"):
            continue
        assert result.energy_j is None, name
        assert "no energy" in result.energy_message, name
        severities = Finding.objects.filter(result=result, rule__startswith="power.")
        assert set(severities.values_list("severity", flat=True)) == {"warning"}, name
    # The stop at the start: the measurement ends at the last reading; all readings are 5 kW.
    assert results["stop"].energy_j == pytest.approx(sound.energy_j, rel=1e-3)
