"""Writing synthetic submission bundles in the v0.6+ layout, for the demo round, tests and benchmarks.

`<Submitter>/systems/<system>.json` and `<Submitter>/results/<system>/<benchmark>/result_N.txt`,
with `:::MLLOG` run logs from submissions.logs.generate. Deterministic for the same arguments.
"""

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from ..logs.generate import mllog_run

ACCELERATORS = ["NVIDIA H100-SXM5-80GB", "NVIDIA B200-SXM-180GB", "AMD Instinct MI355X", "NVIDIA GB200"]


@dataclass
class SystemSpec:
    name: str
    accelerator_model: str = "NVIDIA H100-SXM5-80GB"
    accelerators_per_node: int = 8
    nodes: int = 1
    status: str = "Available on-premise"
    division: str = "closed"
    # benchmark key -> minutes per run (None: a run that does not converge)
    results: dict[str, list[float | None]] = field(default_factory=dict)


def system_json(submitter: str, spec: SystemSpec) -> dict:
    return {
        "submitter": submitter, "division": spec.division, "status": spec.status,
        "system_name": spec.name, "number_of_nodes": str(spec.nodes),
        "host_processors_per_node": "2", "host_processor_model_name": "Intel Xeon Platinum 8480C",
        "accelerators_per_node": str(spec.accelerators_per_node), "accelerator_model_name": spec.accelerator_model,
        "accelerator_interconnect": "NVLink", "framework": "PyTorch NVIDIA Release 25.09",
    }


def write_bundle(parent: Path, submitter: str, systems: list[SystemSpec], targets: dict[str, float]) -> Path:
    """Write one submitter's tree under `parent`; return its folder."""
    root = Path(parent) / submitter
    (root / "systems").mkdir(parents=True, exist_ok=True)
    for spec in systems:
        (root / "systems" / f"{spec.name}.json").write_text(json.dumps(system_json(submitter, spec), indent=1))
        for bench, minutes in spec.results.items():
            folder = root / "results" / spec.name / bench
            folder.mkdir(parents=True, exist_ok=True)
            for n, run_minutes in enumerate(minutes):
                text = mllog_run(
                    benchmark=bench, org=submitter, division=spec.division, status="onprem",
                    platform=spec.name, seed=1000 + n, start_ms=1_760_000_000_000 + n * 86_400_000,
                    minutes=run_minutes if run_minutes is not None else 60.0,
                    target=targets[bench], success=run_minutes is not None,
                )
                (folder / f"result_{n}.txt").write_text(text)
    return root


def demo_systems(count: int, benchmarks: dict[str, int], seed: int = 0) -> list[SystemSpec]:
    """`count` plausible systems; each runs a random subset of `benchmarks` ({key: runs})."""
    rng = random.Random(seed)
    specs = []
    for i in range(count):
        nodes = rng.choice([1, 1, 2, 4, 8, 16, 64])
        per_node = rng.choice([4, 8])
        spec = SystemSpec(
            name=f"demo-{i:03d}-{nodes}x{per_node}", accelerator_model=rng.choice(ACCELERATORS),
            accelerators_per_node=per_node, nodes=nodes,
            status=rng.choice(["Available on-premise", "Available cloud", "Preview"]),
        )
        for bench, runs in benchmarks.items():
            if rng.random() < 0.6:
                base = rng.uniform(5, 200) / (nodes * per_node) ** 0.8
                spec.results[bench] = [round(base * rng.uniform(0.97, 1.05), 3) for _ in range(runs)]
        specs.append(spec)
    return specs
