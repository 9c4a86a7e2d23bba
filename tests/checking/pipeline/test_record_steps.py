"""The steps of recording a bundle (submissions/checking/pipeline/ingest.py _record), each on its own,
on layouts made here: no database, nothing saved."""

import importlib
from types import SimpleNamespace

from leaderboard.models import Benchmark, Result, System
from submissions.checking.bundles.layout import ResultEntry

# The module, not the function of the same name that pipeline/__init__.py exports.
steps = importlib.import_module("submissions.checking.pipeline.ingest")
ROUND = SimpleNamespace(name="Training v5.1", ruleset="5.1.0")
BENCHMARKS = {"bert": Benchmark(pk=1, key="bert"), "resnet": Benchmark(pk=2, key="resnet")}


def _entry(system, benchmark, runs):
    return ResultEntry(
        system=system,
        benchmark=benchmark,
        path=f"Acme/results/{system}/{benchmark}",
        run_files=[f"Acme/results/{system}/{benchmark}/result_{n}.txt" for n in runs],
        extra_files=[],
    )


def test_a_folder_of_another_benchmark_is_ignored_with_a_note():
    layout = SimpleNamespace(results=[_entry("a", "bert", [0, 1]), _entry("a", "gpt99", [0])])
    notes = []
    entries = steps._entries_of_the_round(layout, BENCHMARKS, ROUND, notes)
    assert [(entry.benchmark, bench.pk) for entry, bench in entries] == [("bert", 1)]
    assert notes == ["Acme/results/a/gpt99: 'gpt99' is not a benchmark of Training v5.1; ignored."]


def test_two_folders_of_one_result_are_merged_with_their_runs_in_order():
    layout = SimpleNamespace(results=[_entry("a", "bert", [2, 3]), _entry("a", "BERT", [0, 1])])
    ((entry, bench),) = steps._entries_of_the_round(layout, BENCHMARKS, ROUND, [])
    assert entry.run_indices == [0, 1, 2, 3] and bench.pk == 1


def test_a_result_without_a_description_makes_its_system_with_a_note():
    notes, systems = [], {}
    entries = [(_entry("ghost", "bert", [0]), BENCHMARKS["bert"])]
    ((result, entry),) = steps._results(
        entries, systems, System, ROUND, files=None, notes=notes, problems=[]
    )
    assert isinstance(result, Result) and result.system is systems["ghost"]
    assert systems["ghost"].name == "ghost" and systems["ghost"].key == steps.system_key("ghost")
    assert notes == ["Acme/results/ghost/bert: no description for system 'ghost'."]


def test_runs_follow_their_log_files_and_unmatched_power_logs_are_noted():
    entry = _entry("a", "bert", [0, 1])
    entry.power_files = {"result_7": ["Acme/results/a/bert/power/result_7/node_0.txt"]}
    result = Result(path=entry.path, power_result=True)
    notes = []
    ((_, _, runs),) = steps._runs([(result, entry)], notes)
    assert [(run.index, run.path) for run in runs] == [
        (0, "Acme/results/a/bert/result_0.txt"),
        (1, "Acme/results/a/bert/result_1.txt"),
    ]
    assert notes == ["Acme/results/a/bert/power/result_7/: power logs of no run log; ignored."]
