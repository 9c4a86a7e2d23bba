"""What submissions/checking/rules/mlperf/library.py relies on inside mlperf-logging: the module attributes it swaps
are the ones the library's code goes through, and the classes, functions and methods it calls or overrides
are there and behave as it expects. Should a new version of the library read its configs, run its rules,
read a run or keep its RCPs some other way, these fail, before the swaps silently stop doing anything or a
worker crashes on every log. Only library.py imports mlperf_logging (tests/test_architecture.py)."""

import json
from collections import Counter

import pytest

from submissions.checking.logs import parse_file
from submissions.checking.rules.mlperf import compliance, library, rcp

from ...mllogs import REL, generated_rgat_log, write

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
    checker_class = library._compliance_checker_class("5.1.0")
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


# --- the pieces library.py names -----------------------------------------------------------------------------


# A run_stop record as each parser reads it: 0.6.0's `:::MLL <seconds> <key>: <value>`, MLLOG's JSON from 1.0.0.
RUN_STOP = {
    "0.6.0": ' 1.000 run_stop: {"value": null, "metadata": {"status": "success"}}',
    "1.0.0": '{"namespace": "", "time_ms": 1000.0, "event_type": "INTERVAL_END", "key": "run_stop", '
    '"value": null, "metadata": {"status": "success"}}',
}


@pytest.mark.parametrize("ruleset", ["0.6.0", "1.0.0", "4.0.0", "5.1.0"])
def test_the_log_parser_of_each_shared_rounds_ruleset_reads_and_makes_loglines(ruleset):
    """library.log_parser takes the parser's TOKEN, string_to_logline and LogLine (five fields, in order):
    compliance.read_loglines finds records by the token and reads them, _in_seconds makes a LogLine itself."""
    parser = library.log_parser(ruleset)
    assert parser is not None
    assert isinstance(parser.token, str) and parser.token
    line = parser.read_line(7, parser.token + RUN_STOP.get(ruleset, RUN_STOP["1.0.0"]))
    assert (line.key, line.lineno) == ("run_stop", 7) and line.timestamp in (1.0, 1000.0)
    made = parser.logline("text", 2000.0, "run_start", {"value": None, "metadata": {}}, 3)
    assert (made.full_string, made.timestamp, made.key, made.lineno) == (
        "text",
        2000.0,
        "run_start",
        3,
    )
    assert library.log_parser("9.9.9") is None  # a ruleset this version has no parser for


def test_the_compliance_checker_has_what_the_portals_subclass_calls():
    """library's ComplianceChecker subclasses the library's: it calls configured_checks and put_message, and
    reads the three message stores (warnings, overwritable, not_overwritable) that put_warning and
    put_message fill."""
    checker = library.compliance_checker("5.1.0")
    assert isinstance(checker, mlp.ComplianceChecker)
    for name in ("configured_checks", "put_message"):
        assert callable(getattr(mlp.ComplianceChecker, name)), name
    assert isinstance(checker.warnings, dict)
    assert isinstance(checker.overwritable, dict)
    assert isinstance(checker.not_overwritable, list)
    checker.put_message("an error of the test")
    checker.put_message("an overwritable error of the test", key="k")
    checker.put_warning("a warning of the test", key="w")
    assert checker.error_messages() == ["an overwritable error of the test", "an error of the test"]
    assert checker.warning_messages() == ["a warning of the test"]


def test_the_compliance_checker_runs_the_queued_configs_and_refuses_others():
    parser = library.log_parser("5.1.0")
    line = parser.read_line(1, parser.token + RUN_STOP["1.0.0"])
    checker = library.compliance_checker("5.1.0")
    with library.Capture(), library.compliance_run(checker.enqueue):
        checker.check_loglines([line], "training_5.1.0/common.yaml")
    assert checker.crash is None and checker.refused == []
    errors = checker.error_messages()
    assert errors  # one run_stop alone misses every required key
    assert set(checker.config_of.values()) >= {"training_5.1.0/common.yaml"}
    checker.enqueue("training_5.1.0/../training_0.7.0/common.yaml")
    assert checker.refused == ["training_5.1.0/../training_0.7.0/common.yaml"]


def test_the_rcp_table_finds_records_by_batch_size_and_judges_epochs():
    """RcpTable answers through RCP_Checker's _find_rcp, _find_top_min_rcp, _find_bottom_max_rcp,
    _find_min_rcp, _create_interp_rcp and _eval_submission_record: each is called here, on the library's
    own 5.1.0 rgat table, and its answer has the shape rcp._evaluate reads."""
    rcp_checker = pytest.importorskip("mlperf_logging.rcp_checker.rcp_checker")
    table = library.rcp_table("5.1.0", "rgat")
    assert isinstance(table.checker, rcp_checker.RCP_Checker)
    listed = json.loads((library.rcp_folder("5.1.0") / "rcps_rgat.json").read_text())
    records = {r["BS"]: table.at(r["BS"]) for r in listed.values()}
    # the pruned set: 3 of 5 in 4.1.68
    kept = sorted(bs for bs, r in records.items() if r is not None)
    assert len(kept) >= 2 and all(records[bs]["BS"] == bs for bs in kept), records
    assert table.smallest()["BS"] == kept[0]
    between = (kept[0] + kept[1]) // 2
    assert table.at(between) is None
    low, high = table.below(between), table.above(between)
    assert low["BS"] < between < high["BS"]
    made = table.interpolated(between, low, high)
    assert made["BS"] == between and low["RCP Mean"] <= made["RCP Mean"] <= high["RCP Mean"]
    record = records[kept[0]]
    slow, fast = [record["RCP Mean"] * 1.2] * 10, [record["RCP Mean"] * 0.5] * 10
    assert table.judge(record, slow) == (True, 1.0)
    assert table.judge(record, fast)[0] is False


def test_the_rcp_checker_writes_no_scaling_json():
    """The library writes scaling.json through these two methods; library.rcp_table's checker overrides
    both. Were they renamed, the override would silently stop and the checker would write into the bundle."""
    rcp_checker = pytest.importorskip("mlperf_logging.rcp_checker.rcp_checker")
    for name in ("_set_results_scaling", "_reset_results_scaling"):
        assert callable(getattr(rcp_checker.RCP_Checker, name, None)), name
    assert set(library.rcp_table("5.1.0", "rgat").checker.__class__.__dict__) >= {
        "_set_results_scaling",
        "_reset_results_scaling",
    }
    assert callable(rcp_checker.read_submission_file)
    assert (library.rcp_folder("5.1.0") / "rcps_rgat.json").is_file()


def test_the_system_description_checker_gives_a_verdict_and_logs_its_reasons(tmp_path):
    path = tmp_path / "system.json"
    path.write_text("{}")
    with library.Capture() as capture:
        assert library.check_system_desc(str(path), "5.1.0") is False
    assert capture.records  # the reasons systems.py reads from the library's log records
