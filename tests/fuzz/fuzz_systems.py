"""Fuzz the system-description reader: the file's bytes as the layout reads them, the table's fields, the checks.

The first byte picks the description's kind (a v0.6+ systems/*.json checked by mlperf-logging's rules, or a
v0.5 entry.json); the rest is the file. Any exception is a crash; the fields must fit the System table (counts
in range, texts within their columns) and the description must be storable as JSON.
"""

import json
import sys

from _harness import instrumented, main

with instrumented():
    from submissions.checking.bundles.layout import read_description
    from submissions.checking.rules import SystemFacts, check_system
    from submissions.checking.safejson import storable
    from submissions.checking.systems import FIELD_CHARS, MAX_COUNT, fields_of
    from submissions.synthetic.bundles import SystemSpec, system_json

KINDS = [
    ("system.json", "Acme/systems/s.json", "5.1.0"),
    ("entry.json", "acme/e/results/s/entry.json", "0.5.0"),
    ("system.json", "Acme/systems/s.json", "0.6.0"),
]
COUNTS = ("accelerator_count", "processor_count", "nodes")


def seeds() -> list[bytes]:
    v51 = json.dumps(system_json("Acme", SystemSpec("s", nodes=4))).encode()
    entry = json.dumps(
        {
            "division": "closed",
            "status": "available",
            "submitter": "acme",
            "framework": "TF 1.12",
            "hardware": "8-nodes 2x Intel(R) Xeon(R) Platinum 8180",
            "interconnect": "IB",
            "nodes": [
                {
                    "num_nodes": "8",
                    "cpu": "2x Intel Xeon",
                    "num_accelerators": 8,
                    "accelerator": "tpuv2-8",
                }
            ],
        }
    ).encode()
    nvidia_v06 = b'submitter: {"value": "NVIDIA"}\nentry: {"value": "{\'nodes\': {\'num_nodes\': \'96\'}}"}\n'
    odd = (
        b'{"number_of_nodes": NaN, "accelerators_per_node": 1e300, "host_processors_per_node": "-1", '
        b'"system_name": "' + b"x" * 400 + b'", "nested": ' + b"[" * 20 + b"]" * 20 + b"}"
    )
    return [b"\0" + v51, b"\1" + entry, b"\2" + nvidia_v06, b"\0" + odd]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    kind, path, ruleset = KINDS[data[0] % len(KINDS)]
    notes, problems = [], []
    description, _ = read_description(data[1:], path, notes, problems)
    assert isinstance(description, dict)
    stored, _ = storable(description)
    json.dumps(stored, allow_nan=False)
    fields = fields_of(description, kind)
    for name in COUNTS:
        assert fields[name] is None or (
            type(fields[name]) is int and 0 <= fields[name] <= MAX_COUNT
        ), fields
    for name, limit in FIELD_CHARS.items():
        assert isinstance(fields[name], str) and len(fields[name]) <= limit, (name, fields[name])
    # The checks read the description as the database gives it back: NaN and Infinity as strings.
    for finding in check_system(SystemFacts(json.loads(json.dumps(stored)), kind, path), ruleset):
        assert finding.file == path and len(finding.rule) <= 60, finding
        assert finding.rule != "system.check-crashed", (
            finding.message
        )  # the guard's finding hides a crash: report it


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    main(seeds, test_one_input)
