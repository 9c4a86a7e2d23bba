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


# --- the internals compliance.py and rcp.py still reach (not yet behind library.py) --------------------------


# A run_stop record as each parser reads it: 0.6.0's `:::MLL <seconds> <key>: <value>`, MLLOG's JSON from 1.0.0.
RUN_STOP = {
    "0.6.0": ' 1.000 run_stop: {"value": null, "metadata": {"status": "success"}}',
    "1.0.0": '{"namespace": "", "time_ms": 1000.0, "event_type": "INTERVAL_END", "key": "run_stop", '
    '"value": null, "metadata": {"status": "success"}}',
}


@pytest.mark.parametrize("ruleset", ["0.6.0", "1.0.0", "4.0.0", "5.1.0"])
def test_the_parser_of_each_shared_rounds_ruleset_has_what_compliance_reads(ruleset):
    """compliance.read_loglines finds a record by the parser's TOKEN, makes its LogLine with
    string_to_logline, and builds a LogLine itself for a time_s record (_in_seconds) from five fields."""
    parser = compliance._parser(ruleset)
    assert parser is not None
    assert isinstance(parser.TOKEN, str) and parser.TOKEN
    line = parser.string_to_logline(7, parser.TOKEN + RUN_STOP.get(ruleset, RUN_STOP["1.0.0"]))
    assert (line.key, line.lineno) == ("run_stop", 7) and line.timestamp in (1.0, 1000.0)
    made = parser.LogLine("text", 2000.0, "run_start", {"value": None, "metadata": {}}, 3)
    assert (made.full_string, made.timestamp, made.key, made.lineno) == (
        "text",
        2000.0,
        "run_start",
        3,
    )


def test_the_compliance_checker_has_what_the_portals_subclass_calls():
    """compliance._checker_class subclasses ComplianceChecker: it calls configured_checks and put_message,
    and reads the three message stores its all_messages joins."""
    checker = compliance._checker_class("5.1.0")()
    for name in ("configured_checks", "put_message"):
        assert callable(getattr(mlp.ComplianceChecker, name)), name
    assert isinstance(checker.warnings, dict)
    assert isinstance(checker.overwritable, dict)
    assert isinstance(checker.not_overwritable, list)
    checker.put_message("a message of the test")
    assert "a message of the test" in checker.all_messages()


def test_the_rcp_checker_has_what_rcp_py_overrides_and_calls():
    """rcp._checker overrides the two methods through which the library writes scaling.json; were they
    renamed, the override would silently stop and the checker would write into the bundle. _evaluate calls
    the rest, and read_submission_file reads a run."""
    rcp_checker = pytest.importorskip("mlperf_logging.rcp_checker.rcp_checker")
    for name in (
        "_set_results_scaling",
        "_reset_results_scaling",
        "_create_interp_rcp",
        "_eval_submission_record",
        "_find_bottom_max_rcp",
        "_find_min_rcp",
        "_find_rcp",
        "_find_top_min_rcp",
    ):
        assert callable(getattr(rcp_checker.RCP_Checker, name, None)), name
    assert set(rcp._checker("5.1.0", "rgat").__class__.__dict__) >= {
        "_set_results_scaling",
        "_reset_results_scaling",
    }
    assert callable(rcp_checker.read_submission_file)
