"""Writing synthetic submission bundles in the v0.6+ layout, for the demo round, tests and benchmarks.

`<Submitter>/systems/<system>.json` and `<Submitter>/results/<system>/<benchmark>/result_N.txt`,
with `:::MLLOG` run logs from submissions.synthetic.logs. Deterministic for the same arguments.
For the training v5.1 benchmarks (submissions.synthetic.logs.BENCHMARKS) a bundle passes the
portal's checks (check_run, check_result, check_system with ruleset 5.1.0) when every run
converges: the system description has every field mlperf-logging's system_desc_checker asks
for, and each log's submission_status follows the system's status.
"""

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from submissions.checking.rules import plausibility
from submissions.checking.systems import category_of

from .logs import BENCHMARKS, mllog_run

ACCELERATORS = [
    "NVIDIA H100-SXM5-80GB",
    "NVIDIA B200-SXM-180GB",
    "AMD Instinct MI355X",
    "NVIDIA GB200",
]

# Per accelerator: the hardware and software fields of a system description, in the style of
# the v5.1 systems/*.json files (every value a string, as mlperf-logging's checker expects).
_NVIDIA_SOFTWARE = {
    "cuda_version": "13.0.1.012",
    "cuda_driver_version": "580.82.07",
    "nccl_version": "v2.28.3-1",
    "cublas_version": "13.0.2.14",
    "cudnn_version": "9.13.1.26",
    "openmpi_version": "4.1.7",
}
_HARDWARE = {
    "NVIDIA H100-SXM5-80GB": {
        "host_processor_model_name": "Intel Xeon Platinum 8480C",
        "host_processor_core_count": "56",
        "host_processor_vcpu_count": "112",
        "host_processor_frequency": "2.0 GHz (base); 3.8 GHz (max turbo)",
        "host_memory_capacity": "2.0 TB",
        "host_memory_configuration": "32x 64GB DDR5-4800",
        "host_networking": "8x ConnectX-7 IB NDR 400 Gb/s",
        "accelerator_host_interconnect": "PCIe Gen5 x16",
        "accelerator_frequency": "1980 MHz",
        "accelerator_memory_configuration": "HBM3",
        "accelerator_memory_capacity": "80 GB",
        "accelerator_interconnect": "18x 4th Gen NVLink, 900 GB/s",
        "accelerator_interconnect_topology": "NVSwitch",
        "cooling": "Air-cooled",
        "framework": "PyTorch NVIDIA Release 25.09",
        "other_software_stack": _NVIDIA_SOFTWARE,
    },
    "NVIDIA B200-SXM-180GB": {
        "host_processor_model_name": "Intel Xeon Platinum 8570",
        "host_processor_core_count": "56",
        "host_processor_vcpu_count": "112",
        "host_processor_frequency": "2.1 GHz (base); 4.0 GHz (max turbo)",
        "host_memory_capacity": "2.0 TB",
        "host_memory_configuration": "32x 64GB DDR5-5600",
        "host_networking": "8x ConnectX-7 IB NDR 400 Gb/s",
        "accelerator_host_interconnect": "PCIe Gen5 x16",
        "accelerator_frequency": "",
        "accelerator_memory_configuration": "HBM3e",
        "accelerator_memory_capacity": "180 GB",
        "accelerator_interconnect": "18x 5th Gen NVLink, 1.8 TB/s",
        "accelerator_interconnect_topology": "NVSwitch",
        "cooling": "Air-cooled",
        "framework": "NVIDIA NeMo Framework Release 25.09",
        "other_software_stack": _NVIDIA_SOFTWARE,
    },
    "AMD Instinct MI355X": {
        "host_processor_model_name": "AMD EPYC 9575F",
        "host_processor_core_count": "64",
        "host_processor_vcpu_count": "128",
        "host_processor_frequency": "3.3 GHz (base); 5.0 GHz (max boost)",
        "host_memory_capacity": "3.0 TB",
        "host_memory_configuration": "24x 128GB DDR5-6400",
        "host_networking": "8x AMD Pollara 400 Gb/s",
        "accelerator_host_interconnect": "PCIe Gen5 x16",
        "accelerator_frequency": "2400 MHz",
        "accelerator_memory_configuration": "HBM3E",
        "accelerator_memory_capacity": "288 GB",
        "accelerator_interconnect": "AMD Infinity Fabric, 153.6 GB/s per link",
        "accelerator_interconnect_topology": "fully connected",
        "cooling": "Liquid-cooled",
        "framework": "PyTorch 2.8 ROCm 7.0",
        "other_software_stack": {"rocm_version": "7.0.0"},
    },
    "NVIDIA GB200": {
        "host_processor_model_name": "NVIDIA Grace (Neoverse-V2)",
        "host_processor_core_count": "72",
        "host_processor_vcpu_count": "72",
        "host_processor_frequency": "3.1 GHz",
        "host_memory_capacity": "960 GB",
        "host_memory_configuration": "LPDDR5X",
        "host_networking": "4x ConnectX-7 IB NDR 400 Gb/s",
        "accelerator_host_interconnect": "NVLink-C2C",
        "accelerator_frequency": "",
        "accelerator_memory_configuration": "HBM3e",
        "accelerator_memory_capacity": "186 GB",
        "accelerator_interconnect": "18x 5th Gen NVLink, 1.8 TB/s",
        "accelerator_interconnect_topology": "NVL72",
        "cooling": "Liquid-cooled",
        "framework": "NVIDIA NeMo Framework Release 25.09",
        "other_software_stack": _NVIDIA_SOFTWARE,
    },
}

# The system's status (mlperf-logging's availability values) -> the logs' submission_status.
LOG_STATUS = {
    "Available on-premise": "onprem",
    "Available cloud": "cloud",
    "Preview": "preview",
    "Research, Development, or Internal (RDI)": "research",
}


def log_status(system_status: str) -> str:
    """The submission_status a run log of a system with this status says ('onprem' when unclear)."""
    if system_status in LOG_STATUS:
        return LOG_STATUS[system_status]
    category = category_of(system_status)
    return "onprem" if category == "unknown" else category


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
    """A systems/<name>.json with every field mlperf-logging's system_desc_checker requires."""
    hardware = _HARDWARE.get(spec.accelerator_model, _HARDWARE["NVIDIA H100-SXM5-80GB"])
    return {
        "submitter": submitter,
        "division": spec.division,
        "status": spec.status,
        "system_name": spec.name,
        "number_of_nodes": str(spec.nodes),
        "host_processors_per_node": "2",
        "host_processor_model_name": hardware["host_processor_model_name"],
        "host_processor_core_count": hardware["host_processor_core_count"],
        "host_processor_vcpu_count": hardware["host_processor_vcpu_count"],
        "host_processor_frequency": hardware["host_processor_frequency"],
        "host_processor_caches": "",
        "host_processor_interconnect": "",
        "host_memory_capacity": hardware["host_memory_capacity"],
        "host_storage_type": "NVMe SSD",
        "host_storage_capacity": "4x 3.84 TB NVMe",
        "host_networking": hardware["host_networking"],
        "host_networking_topology": "Rail-optimized fat tree" if spec.nodes > 1 else "N/A",
        "host_memory_configuration": hardware["host_memory_configuration"],
        "accelerators_per_node": str(spec.accelerators_per_node),
        "accelerator_model_name": spec.accelerator_model,
        "accelerator_host_interconnect": hardware["accelerator_host_interconnect"],
        "accelerator_frequency": hardware["accelerator_frequency"],
        "accelerator_on-chip_memories": "",
        "accelerator_memory_configuration": hardware["accelerator_memory_configuration"],
        "accelerator_memory_capacity": hardware["accelerator_memory_capacity"],
        "accelerator_interconnect": hardware["accelerator_interconnect"],
        "accelerator_interconnect_topology": hardware["accelerator_interconnect_topology"],
        "cooling": hardware["cooling"],
        "hw_notes": "",
        "framework": hardware["framework"],
        "other_software_stack": dict(hardware["other_software_stack"]),
        "operating_system": "Ubuntu 24.04.3 LTS",
        "sw_notes": "",
    }


def write_bundle(
    parent: Path, submitter: str, systems: list[SystemSpec], targets: dict[str, float]
) -> Path:
    """Write one submitter's tree under `parent`; return its folder.

    `targets` gives each benchmark's quality target (a v5.1 benchmark missing from it takes its
    BENCHMARKS target). Runs with None minutes stop with status "aborted" short of the target."""
    root = Path(parent) / submitter
    (root / "systems").mkdir(parents=True, exist_ok=True)
    for spec in systems:
        (root / "systems" / f"{spec.name}.json").write_text(
            json.dumps(system_json(submitter, spec), indent=1)
        )
        status = log_status(spec.status)
        for bench, minutes in spec.results.items():
            target = (
                targets[bench]
                if bench in targets or bench not in BENCHMARKS
                else BENCHMARKS[bench]["target"]
            )
            folder = root / "results" / spec.name / bench
            folder.mkdir(parents=True, exist_ok=True)
            for n, run_minutes in enumerate(minutes):
                text = mllog_run(
                    benchmark=bench,
                    org=submitter,
                    division=spec.division,
                    status=status,
                    platform=spec.name,
                    seed=1000 + n,
                    start_ms=1_760_000_000_000 + n * 86_400_000,
                    minutes=run_minutes if run_minutes is not None else 60.0,
                    target=target,
                    success=run_minutes is not None,
                )
                (folder / f"result_{n}.txt").write_text(text)
    return root


def _demo_minutes(
    benchmark: str, accelerator_model: str, accelerators: int, rng: random.Random
) -> float:
    """A time the plausibility checks believe: from 1.3 to 3 times the fewest accelerator-minutes its family
    (or any) has needed in the published rounds, a little more per accelerator on larger systems, and no
    faster beyond 64 accelerators (the generated logs keep one global batch size, as small systems use)."""
    family = plausibility.family_of(accelerator_model)
    fewest = (
        family
        and plausibility.fewest_accelerator_minutes(benchmark, family)
        or plausibility.fewest_accelerator_minutes(benchmark, None)
    )
    fewest_minutes = fewest.value if fewest else 1000.0
    return fewest_minutes * rng.uniform(1.3, 3.0) * accelerators**0.1 / min(accelerators, 64)


def demo_systems(count: int, benchmarks: dict[str, int], seed: int = 0) -> list[SystemSpec]:
    """`count` plausible systems; each runs a random subset of `benchmarks` ({key: runs})."""
    rng = random.Random(seed)
    specs = []
    for i in range(count):
        nodes = rng.choice([1, 1, 2, 4, 8, 16, 64])
        per_node = rng.choice([4, 8])
        spec = SystemSpec(
            name=f"demo-{i:03d}-{nodes}x{per_node}",
            accelerator_model=rng.choice(ACCELERATORS),
            accelerators_per_node=per_node,
            nodes=nodes,
            status=rng.choice(["Available on-premise", "Available cloud", "Preview"]),
        )
        for bench, runs in benchmarks.items():
            if rng.random() < 0.6:
                base = _demo_minutes(bench, spec.accelerator_model, nodes * per_node, rng)
                spec.results[bench] = [
                    round(base * rng.uniform(0.97, 1.05), 3) for _ in range(runs)
                ]
        specs.append(spec)
    return specs
