"""Fuzz the bundle layout reader: layout.detect over a bundle read in place, then what ingest reads per result.

The input is turned into a bundle of up to 24 files: each path built from names a bundle has (Acme, results,
systems, a benchmark, result_0.txt, entry.json, ...) or from the input's own bytes, each content a log line,
a description, or the input's bytes. The files lie in one scratch archive and are read as TarFiles, as the
pipeline reads a plain tar. LayoutError is the one refusal expected; any other exception is a crash, and the
layout must name only files of the bundle, with unique run numbers the Run table takes.
"""

import sys

import atheris
from _harness import SCRATCH, instrumented, main

with instrumented():
    from submissions.checking.bundles import LayoutError, TarFiles, detect
    from submissions.checking.bundles.layout import MAX_NAME_CHARS, read_scaling_factor
    from submissions.checking.bundles.runlogs import result_files
    from submissions.checking.systems import fields_of

ARCHIVE = SCRATCH / "bundle.bin"
NAMES = [
    "Acme",
    "results",
    "systems",
    "s",
    "rgat",
    "resnet",
    "result_0.txt",
    "result_1.txt",
    "result_99.txt",
    "entry.json",
    "submission.json",
    "scaling.json",
    "s.json",
    "run1.txt",
    ".DS_Store",
    "v0.5.0",
    "code",
    "benchmarks",
    "__MACOSX",
    "result_" + "9" * 23 + ".txt",
]
CONTENTS = [
    b':::MLLOG {"time_ms": 1, "key": "submission_benchmark", "value": "rgat", "metadata": {}}\n',
    b":::MLPv0.5.0 resnet 1541.0 (train.py:1) run_start\n",
    b'{"submitter": "Acme", "number_of_nodes": "2", "accelerators_per_node": "8", "system_name": "s"}',
    b'{"org": "Acme", "nodes": [{"num_nodes": "1", "num_accelerators": 8}]}',
    b'{"scaling_factor": 1.07}',
    b"",
]
MAX_INDEX = 2**31 - 1


def seeds() -> list[bytes]:
    # A FuzzedDataProvider reads these bytes as (file count, then per file: name choices, content choice).
    return [
        bytes([4, 3, 0, 1, 3, 4, 6, 0, 3, 0, 2, 12, 2]),
        bytes([2, 5, 15, 0, 1, 3, 5, 8, 1]),
        bytes([6] + [3, 0, 1, 3, 4, 6, 0] * 6),
        b"\x03\x04\x00\x01\x03\x04\x13\x00",
    ]


def _bundle(fdp: atheris.FuzzedDataProvider) -> TarFiles:
    files, folders, blob = {}, {""}, bytearray()
    for _ in range(fdp.ConsumeIntInRange(1, 24)):
        parts = []
        for _ in range(fdp.ConsumeIntInRange(1, 6)):
            pick = fdp.ConsumeIntInRange(0, len(NAMES))
            name = NAMES[pick] if pick < len(NAMES) else fdp.ConsumeUnicodeNoSurrogates(12)
            if name and name not in (".", "..") and "/" not in name:
                parts.append(name)
        if not parts:
            continue
        pick = fdp.ConsumeIntInRange(0, len(CONTENTS))
        content = (
            CONTENTS[pick]
            if pick < len(CONTENTS)
            else fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 512))
        )
        path = "/".join(parts)
        if path in folders or any("/".join(parts[:i]) in files for i in range(1, len(parts))):
            continue  # a file and a folder of one name: the unpacker refuses that bundle
        files[path] = (len(blob), len(content))
        blob += content
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
    ARCHIVE.write_bytes(blob)
    return TarFiles(str(ARCHIVE), files, folders, "upload")


def test_one_input(data: bytes) -> None:
    bundle = _bundle(atheris.FuzzedDataProvider(data))
    try:
        layout = detect(bundle)
    except LayoutError:
        return
    assert len(layout.submitter) <= MAX_NAME_CHARS
    for system in layout.systems:
        assert system.description_path is None or system.description_path in bundle.files, system
        assert isinstance(system.description, dict) and len(system.name) <= MAX_NAME_CHARS
        fields_of(system.description, system.description_format)
    for result in layout.results:
        assert all(path in bundle.files for path in result.run_files + result.extra_files), result
        assert len(set(result.run_indices)) == len(result.run_indices) == len(result.run_files), (
            result
        )
        assert all(0 <= index <= MAX_INDEX for index in result.run_indices), result
        result_files(bundle, result.path, list(zip(result.run_indices, result.run_files)))
        for path in result.extra_files:
            if path.endswith("/scaling.json"):
                read_scaling_factor(bundle.read_bytes(path), path, [], [])
    for finding in layout.problems:
        assert finding.file in bundle.files, finding
        assert finding.rule != "internal.read", (
            finding.message
        )  # the guard's finding hides a crash: report it


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    main(seeds, test_one_input)
