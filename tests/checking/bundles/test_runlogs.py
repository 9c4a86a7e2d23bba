"""Run logs found by what they hold (submissions.checking.bundles.runlogs) and the layout's results built from them."""

import json
import random
from pathlib import Path

import pytest

from submissions.checking.bundles import detect
from submissions.checking.bundles.runlogs import (
    HEAD_LIMIT,
    declared_benchmark,
    holds_log_lines,
    run_indices,
)
from submissions.synthetic.logs import mllog_run


@pytest.fixture(autouse=True)
def media():
    """No Django here: shadow conftest's autouse fixture, which wants pytest-django."""
    return None


def log(benchmark="bert", minutes=10.0, n=0) -> str:
    return mllog_run(
        benchmark=benchmark,
        org="Acme",
        division="closed",
        status="onprem",
        platform="s",
        seed=n,
        start_ms=1_760_000_000_000 + n * 86_400_000,
        minutes=minutes,
        target=0.72,
    )


def write(base: Path, files: dict) -> Path:
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return base


@pytest.mark.parametrize(
    "text,is_log",
    [
        (':::MLLOG {"key": "run_start"}\n', True),  # v5.1
        ('0: :::MLLOG {"key": "run_start"}\n', True),  # a rank's prefix before it
        (':::MLL 1560000000.000 run_start: {"value": null}\n', True),  # v0.6
        (":::MLPv0.5.0 resnet 1541710000.0 (x.py:1) run_start\n", True),  # v0.5
        ("MLPerf: resnet [06/13/19 00:30:56], run_start\n", True),  # Alibaba's v0.6 lines
        ("MLPerf: our results are in the table below.\n", False),  # the phrase alone is no log line
        ("#!/bin/bash\necho training\n", False),
        ('{"scaling_factor": 1.0}', False),
        ("", False),
        (b"\x00\x01:::MLLOG {}\n", False),  # binary
    ],
)
def test_a_log_is_known_by_its_marker_lines(tmp_path, text, is_log):
    path = write(tmp_path, {"f": text}) / "f"
    assert holds_log_lines(path) is is_log


def test_the_marker_is_looked_for_past_a_long_preamble_up_to_the_limit(tmp_path):
    # Real v5.1 logs print up to ~220 KB before their first MLPerf line; the marker here straddles two reads.
    noise = "x" * (64 * 1024 - 4) + "\n"
    write(
        tmp_path,
        {
            "late": noise * 3 + ':::MLLOG {"key": "run_start"}\n',
            "too_late": "y\n" * (HEAD_LIMIT // 2 + 10) + ':::MLLOG {"key": "run_start"}\n',
        },
    )
    assert holds_log_lines(tmp_path / "late")
    assert not holds_log_lines(tmp_path / "too_late")


def test_the_benchmark_a_log_names(tmp_path):
    late = "noise\n" * 40_000 + log("rgat")  # submission_benchmark after ~240 KB
    write(
        tmp_path,
        {
            "v51": late,
            "v06": ':::MLL 1560000000.000 submission_benchmark: {"value": "ssd"}\n',
            "v05": ":::MLPv0.5.0 gnmt 1541710000.0 (x.py:1) run_start\n",
            "alibaba": "MLPerf: resnet [06/13/19 00:30:56], run_start\n",
            "none": ':::MLLOG {"key": "run_start", "value": null, "time_ms": 1}\n',
        },
    )
    assert [declared_benchmark(tmp_path / n) for n in ("v51", "v06", "v05", "alibaba", "none")] == [
        "rgat",
        "ssd",
        "gnmt",
        "resnet",
        None,
    ]


def test_run_indices_are_unique_and_do_not_depend_on_the_listing_order():
    names = [
        "result_0.txt",
        "result_1.txt",
        "result_1.log",
        "log.txt",
        "run7.txt",
        "result_3_retry.txt",
    ]
    expected = {
        "result_0.txt": 0,
        "result_1.txt": 1,
        "log.txt": 2,
        "result_1.log": 3,
        "result_3_retry.txt": 4,
        "run7.txt": 7,
    }
    assert dict(zip(names, run_indices(names))) == expected
    shuffled = names[:]
    random.Random(1).shuffle(shuffled)
    assert dict(zip(shuffled, run_indices(shuffled))) == expected
    # The number in a name when it is free; result_N.txt keeps N whatever else is there.
    assert run_indices(["result_4.log", "result_9_b.txt", "result_2.txt"]) == [4, 9, 2]


def test_logs_with_other_names_are_runs_of_their_folder_and_say_so(tmp_path):
    write(
        tmp_path,
        {
            "Acme/systems/s.json": "{}",
            **{f"Acme/results/s/bert/result_{n}.txt": log(n=n) for n in range(3)},
            "Acme/results/s/bert/result_3.log": log(n=3),
            "Acme/results/s/bert/result_4_retry.txt": log(n=4),
            "Acme/results/s/bert/README.md": "# how we ran it\n",
            "Acme/results/s/bert/scaling.json": '{"scaling_factor": 1.0}',
        },
    )
    [result] = detect(tmp_path).results
    names = [p.rpartition("/")[2] for p in result.run_files]
    assert names == [
        "result_0.txt",
        "result_1.txt",
        "result_2.txt",
        "result_3.log",
        "result_4_retry.txt",
    ]
    assert result.run_indices == [0, 1, 2, 3, 4]
    assert result.misplaced == [
        "Acme/results/s/bert/result_3.log",
        "Acme/results/s/bert/result_4_retry.txt",
    ]
    assert sorted(result.extra_files) == [
        "Acme/results/s/bert/README.md",
        "Acme/results/s/bert/scaling.json",
    ]
    assert (result.path, result.log_folder, result.no_logs) == (
        "Acme/results/s/bert",
        "Acme/results/s/bert",
        "",
    )


def test_a_bundle_whose_logs_all_have_other_names_is_read(tmp_path):
    write(
        tmp_path,
        {
            "Acme/systems/s.json": "{}",
            **{f"Acme/results/s/bert/run{n}.log": log(n=n) for n in range(2)},
        },
    )
    layout = detect(tmp_path)  # was: "No run logs (result_N.txt) were found in the bundle"
    assert layout.submitter == "Acme"
    assert [(r.benchmark, r.run_indices) for r in layout.results] == [("bert", [0, 1])]


def test_logs_directly_in_a_system_folder_are_runs_of_the_benchmark_they_name(tmp_path):
    write(
        tmp_path,
        {
            "Acme/systems/s.json": "{}",
            "Acme/results/s/bert_0.txt": log("bert", n=0),
            "Acme/results/s/bert_1.txt": log("bert", n=1),
            "Acme/results/s/rgat.log": log("rgat"),
            **{f"Acme/results/s/rgat/result_{n}.txt": log("rgat", n=n) for n in range(2)},
            "Acme/results/s/notes.txt": "not a log\n",
            "Acme/results/s/nameless.txt": ':::MLLOG {"key": "run_start", "value": null, "time_ms": 1}\n',
        },
    )
    layout = detect(tmp_path)
    by_bench = {r.benchmark: r for r in layout.results}
    bert, rgat = by_bench["bert"], by_bench["rgat"]
    assert (bert.path, bert.log_folder) == (
        "Acme/results/s",
        "Acme/results/s/bert",
    )  # no bert/ folder
    assert (bert.run_files, bert.run_indices) == (
        ["Acme/results/s/bert_0.txt", "Acme/results/s/bert_1.txt"],
        [0, 1],
    )
    assert bert.misplaced == bert.run_files
    # One rgat result: its folder's logs and the one beside it, numbered after them.
    assert (rgat.path, rgat.run_indices) == ("Acme/results/s/rgat", [0, 1, 2])
    assert rgat.run_files[2] == rgat.misplaced[0] == "Acme/results/s/rgat.log"
    assert any(
        n.startswith("Acme/results/s/notes.txt: file not part of the layout") for n in layout.notes
    )
    assert any(
        n.startswith("Acme/results/s/nameless.txt: MLPerf log lines that name no benchmark")
        for n in layout.notes
    )


def test_a_result_folder_without_a_readable_log_is_a_result_with_the_reason(tmp_path):
    write(
        tmp_path,
        {
            "Acme/systems/s.json": "{}",
            **{f"Acme/results/s/bert/result_{n}.txt": log(n=n) for n in range(2)},
            "Acme/results/s/rgat/stdout.txt": "Traceback (most recent call last):\n",
            "Acme/results/s/rgat/.DS_Store": "",
        },
    )
    (tmp_path / "Acme/results/s/ssd").mkdir()
    layout = detect(tmp_path)
    assert [(r.benchmark, len(r.run_files), r.no_logs) for r in layout.results] == [
        ("bert", 2, ""),
        (
            "rgat",
            0,
            "none of the files in Acme/results/s/rgat/ holds MLPerf log lines (stdout.txt).",
        ),
        ("ssd", 0, "the folder Acme/results/s/ssd/ is empty."),
    ]
    assert json.dumps([r.path for r in layout.results]) == json.dumps(
        ["Acme/results/s/bert", "Acme/results/s/rgat", "Acme/results/s/ssd"]
    )


def test_a_results_files_under_the_names_the_rcp_check_reads(tmp_path):
    import tarfile

    from submissions.checking.bundles import FolderFiles, open_bundle
    from submissions.checking.bundles.runlogs import result_files

    write(
        tmp_path / "b",
        {
            "A/results/s/rgat/run_a.log": "a",
            "A/results/s/rgat/scaling.json": "{}",
            "A/results/s/rgat.txt": "b",
        },
    )
    runs = [(0, "A/results/s/rgat/run_a.log"), (1, "A/results/s/rgat.txt")]
    on_disk = result_files(FolderFiles(tmp_path / "b"), "A/results/s/rgat", runs)
    assert {name: Path(f).read_text() for name, f in on_disk.items()} == {
        "result_0.txt": "a",
        "result_1.txt": "b",
        "scaling.json": "{}",
    }
    with tarfile.open(tmp_path / "b.tar", "w") as tar:
        tar.add(tmp_path / "b" / "A", arcname="A")
    in_place = result_files(
        open_bundle(tmp_path / "b.tar", tmp_path / "x"), "A/results/s/rgat", runs
    )
    assert {name: f.read_bytes() for name, f in in_place.items()} == {
        "result_0.txt": b"a",
        "result_1.txt": b"b",
        "scaling.json": b"{}",
    }
    assert "scaling.json" not in result_files(FolderFiles(tmp_path / "b"), "A/results/s", runs)
