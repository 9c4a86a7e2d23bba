"""What submissions/checking/rules/library.py relies on inside mlperf-logging: the module attributes it swaps
are the ones the library's code goes through. Should a new version of the library read its configs, run its
rules or read a run some other way, these fail, before the swaps silently stop doing anything."""

from collections import Counter

import pytest

from submissions.checking.logs import parse_file
from submissions.checking.rules import compliance, library, rcp

from .test_rules_compliance import REL, generated_rgat_log, write

mlp = pytest.importorskip("mlperf_logging.compliance_checker.mlp_compliance")


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


def counted(calls: Counter, name: str, real):
    def run(*args, **kwargs):
        calls[name] += 1
        return real(*args, **kwargs)

    return run


def test_the_checker_queues_configs_reads_yaml_and_runs_rules_through_the_swapped_names(
    tmp_path, monkeypatch
):
    calls = Counter()
    checker_class = compliance._checker_class("5.1.0")
    monkeypatch.setattr(checker_class, "enqueue", counted(calls, "enqueue", checker_class.enqueue))
    monkeypatch.setattr(library, "_ConfigFile", counted(calls, "open", library._ConfigFile))
    yaml_cache = library._cached_yaml()
    monkeypatch.setattr(yaml_cache, "load", counted(calls, "yaml", yaml_cache.load))
    monkeypatch.setattr(library, "_cached_eval", counted(calls, "eval", library._cached_eval))
    monkeypatch.setattr(library, "_cached_exec", counted(calls, "exec", library._cached_exec))

    found = compliance.check_file(write(tmp_path, generated_rgat_log()), REL, "5.1.0", "rgat")
    assert list(found) == []
    # common.yaml is queued by us, then queues the division's and the benchmark's rules through enqueue_config.
    assert calls["enqueue"] >= 2
    assert calls["open"] >= 2 and calls["yaml"] == calls["open"]  # each config opened, then loaded
    assert (
        calls["eval"] > 10 and calls["exec"] > 0
    )  # the rules' CHECK code, their BEGIN/PRE/POST code


def test_the_rcp_reader_reads_through_open_strips_with_the_quadratic_pattern_and_decodes_json(
    tmp_path, monkeypatch
):
    path = write(tmp_path, generated_rgat_log())
    kept = []
    parse_file(path, max_line_bytes=64 * 1024, mllog_lines=kept)
    stripped, decoded = [], []
    real_sub, real_loads = library.LinearRe.sub, library._Json.loads

    def sub(self, pattern, repl, string, *args, **kwargs):
        stripped.append(pattern == self.pattern and repl == self.token)
        return real_sub(self, pattern, repl, string, *args, **kwargs)

    monkeypatch.setattr(library.LinearRe, "sub", sub)
    monkeypatch.setattr(
        library._Json, "loads", staticmethod(lambda s: decoded.append(s) or real_loads(s))
    )
    path.unlink()  # the reader must take the lines given, through the `open` we swap in
    reading = rcp.read_run(path, "5.1.0", mllog_lines=kept)
    assert set(reading) == {"not_converged", "epochs", "batch_size"}, reading
    assert reading["batch_size"] == 16384
    assert stripped and all(
        stripped
    )  # re.sub(".*" + TOKEN, TOKEN, line): the pattern LinearRe replaces
    assert decoded  # json.loads, which _Json answers
