"""Tests for submissions.checking.logs: line formats, tolerant parsing and run summaries (no Django needed)."""

import calendar
import json
import tracemalloc

import pytest

import submissions.checking.logs.parse as log_parser
from submissions.checking.logs import Event, ParsedLog, parse_file, parse_lines, summarize
from submissions.checking.logs.formats import detect, mll, mllog
from submissions.checking.logs.parse import MAX_PROBLEMS


@pytest.fixture(autouse=True)
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


def v05(t, key, value=None, bench="resnet", prefix=""):
    tail = key if value is None else f"{key}: {value}"
    return f"{prefix}:::MLPv0.5.0 {bench} {t} (main.py:1) {tail}"


def mll_line(t, key, value=None, **metadata):
    return f":::MLL {t} {key}: " + json.dumps(
        {"value": value, "metadata": {"file": "x.py", "lineno": 3, **metadata}}
    )


def mllog_line(t_ms, key, value=None, prefix="", **metadata):
    record = {
        "namespace": "",
        "time_ms": t_ms,
        "event_type": "POINT_IN_TIME",
        "key": key,
        "value": value,
        "metadata": {"file": "x.py", "lineno": 3, **metadata},
    }
    return prefix + ":::MLLOG " + json.dumps(record)


def keys(log):
    return [e.key for e in log.events]


# --- v0.5 -------------------------------------------------------------------------------------------------


def test_v05_google_style_run():
    log = parse_lines(
        [
            v05("1541660152.516320944", "run_clear_caches"),
            v05("1541660914.084755421", "run_start"),
            v05("1541660914.154716969", "run_set_random_seed", '"none"'),
            v05("1541660914.3", "input_batch_size", "1024"),
            v05("1541660914.31", "opt_learning_rate", '"DEFERRED: 3b6805e6"'),
            v05("1541660914.305423737", "eval_target", "0.749"),
            v05("1541660914.4", "model_hp_conv2d_fixed_padding", "(224, 224, 3) -> (112, 112, 64)"),
            v05("1541675224.5", "eval_accuracy", '{"value": 0.70, "epoch": 48}'),
            v05(
                "1541679005.121917486",
                "eval_accuracy",
                '{"value": 0.7511393427848816, "epoch": 61}',
            ),
            v05("1541679005.2", "opt_learning_rate", "0.5"),
            v05("1541679005.124143600", "run_stop", '{"success": "true"}'),
            v05("1541679007.958597183", "run_final"),
        ]
    )
    assert log.formats == {"mlperf-0.5"} and log.problems == [] and log.line_count == 12
    assert log.events[6].value == "(224, 224, 3) -> (112, 112, 64)"
    assert log.events[2].metadata == {"benchmark": "resnet"}
    s = summarize(log)
    assert s.success and s.failure_reason == "" and s.status == "success"
    assert s.time_to_train_s == pytest.approx(18091.04, abs=0.01)
    assert s.eval_x == "epoch" and s.eval_curve == [(48.0, 0.70), (61.0, 0.7511393427848816)]
    assert s.quality_target == 0.749 and s.seed == "none"
    assert s.hyperparameters == {
        "input_batch_size": 1024,
        "opt_learning_rate": 0.5,
    }  # DEFERRED skipped
    assert s.submission == {
        "benchmark": "resnet",
        "org": "",
        "division": "",
        "status": "",
        "platform": "",
    }
    assert s.first_line == {"run_start": 2, "run_stop": 11}


def test_v05_nvidia_duplicates_are_dropped_and_bare_run_stop_judged_by_target():
    lines = []
    for t, key, value in [
        ("10.5", "run_start", None),
        ("10.6", "run_set_random_seed", "29104"),
        ("11.0", "eval_target", "0.749"),
        ("20.0", "eval_accuracy", '{"value": 0.5, "epoch": 3}'),
        ("30.0", "eval_accuracy", '{"value": 0.75186, "epoch": 7}'),
        ("30.5", "run_stop", None),
    ]:
        lines.append(v05(t, key, value))
        lines.append(
            v05(
                t,
                key,
                value,
                prefix="INFO:mlperf_compliance::" if value is None else "DEBUG:mlperf_compliance::",
            )
        )
        lines.append("some framework chatter")
    log = parse_lines(lines)
    assert keys(log) == [
        "run_start",
        "run_set_random_seed",
        "eval_target",
        "eval_accuracy",
        "eval_accuracy",
        "run_stop",
    ]
    assert [e.line for e in log.events] == [1, 4, 7, 10, 13, 16]
    s = summarize(log)
    assert s.status is None and s.success and s.seed == 29104
    assert s.time_to_train_s == pytest.approx(20.0)
    # A stricter target from the caller makes the same bare run_stop a failure.
    s = summarize(log, quality_target=0.76)
    assert not s.success and s.quality_target == 0.76
    assert (
        "no status" in s.failure_reason
        and "0.75186" in s.failure_reason
        and "line 13" in s.failure_reason
    )
    # Lower-is-better metrics compare the other way.
    assert summarize(log, quality_target=0.8, higher_is_better=False).success
    assert not summarize(log, quality_target=0.7, higher_is_better=False).success


def test_v05_success_false_is_aborted():
    log = parse_lines(
        [
            v05(1.0, "run_start", bench="ncf"),
            v05(5.0, "run_stop", '{"success": false}', bench="ncf"),
        ]
    )
    s = summarize(log)
    assert s.status == "aborted" and not s.success
    assert s.failure_reason == "run_stop status is 'aborted' (line 2)"
    assert s.time_to_train_s == 4.0 and s.submission["benchmark"] == "ncf"


def test_bare_run_stop_without_target_or_eval_counts_as_success():
    assert summarize(parse_lines([v05(1, "run_start"), v05(2, "run_stop")])).success
    log = parse_lines(
        [
            v05(1, "run_start"),
            v05(1.5, "eval_accuracy", '{"value": 0.1, "epoch": 1}'),
            v05(2, "run_stop"),
        ]
    )
    assert summarize(log).success  # no target anywhere
    assert not summarize(log, quality_target=0.5).success


# --- v0.6 MLL ---------------------------------------------------------------------------------------------


def test_mll_json_and_intel_python_dicts():
    log = parse_lines(
        [
            mll_line("0.0", "submission_org", "google"),
            ":::MLL 1560879861.281881305 cache_clear: {value: true, metadata: {lineno: 0, file: manual}}",
            ":::MLL 1560879869.591512 init_start: {\"value\": null, \"metadata\": {'lineno': 742, 'file': 'r.py'}}",
            ":::MLL 1560880055.330519 init_stop: {\"value\": null, \"metadata\": {'lineno': 614, 'file': 'r.py'}}",
            ":::MLL 1560880055.330893 run_start: {'value': None, 'metadata': {'lineno': 615, 'file': 'r.py'}}",
            ":::MLL 1560880055.4 global_batch_size: {\"value\": 8192, \"metadata\": {'lineno': 233, 'file': 't.py'}}",
            ':::MLL 1560880563.4235 opt_learning_rate_decay_boundary_steps: {"value": [12500, 18750][2019-06-18 '
            "11:56:41] moving /lfs/models/000011-000007.index",
            ":::MLL 15608[2019-06-18 10:02:47] iteration time 0: 56.971 seconds",
            mll_line("1560880100.0", "eval_accuracy", 0.4, epoch_num=18),
            mll_line(
                "1560880200.0", "eval_accuracy", "0.62", epoch_num=20
            ),  # NVIDIA v0.6 Transformer: a string
            mll_line(
                "1560880300.0", "eval_accuracy", [0.37, 0.34], epoch_num=21
            ),  # Mask R-CNN: two metrics
            mll_line("1560882110.872039", "run_stop", None, status="success"),
        ]
    )
    assert log.formats == {"mll"}
    assert [p[0] for p in log.problems] == [7, 8]
    assert all("mll" in msg for _, msg in log.problems)
    assert log.events[1].value is True and log.events[1].metadata == {}
    assert log.events[4].value is None
    s = summarize(log, require_init_stop_before_run_start=True)
    assert s.success, s.failure_reason
    assert s.eval_curve == [(18.0, 0.4), (20.0, 0.62)] and s.eval_x == "epoch"
    assert s.hyperparameters == {"global_batch_size": 8192}
    assert s.submission["org"] == "google" and s.submission["platform"] == ""
    assert s.init_stop == pytest.approx(1560880055.330519)
    assert s.first_line["init_stop"] == 4 and s.first_line["run_start"] == 5


def test_mll_abort_status():
    log = parse_lines([mll_line(100.0, "run_start"), mll_line(200.0, "run_stop", status="abort")])
    s = summarize(log)
    assert s.status == "abort" and not s.success
    assert s.failure_reason == "run_stop status is 'abort' (line 2)"
    assert s.time_to_train_s == 100.0  # still reported for failed runs


# --- v1.0+ MLLOG ------------------------------------------------------------------------------------------


def test_mllog_run_with_prefixes_samples_and_submission():
    log = parse_lines(
        [
            mllog_line(1000, "cache_clear", True),
            mllog_line(1500, "submission_benchmark", "llama31_405b"),
            mllog_line(1500, "submission_org", "NVIDIA"),
            mllog_line(1500, "submission_division", "closed"),
            mllog_line(1500, "submission_status", "onprem"),
            mllog_line(1500, "submission_platform", "640xNVIDIA GB200"),
            mllog_line(1501, "seed", 6808),
            mllog_line(1501, "global_batch_size", 960),
            mllog_line(1501, "opt_base_learning_rate", 6.6e-05),
            mllog_line(1501, "target_accuracy", 5.6),
            mllog_line(1502, "global_batch_size", 1920),  # first value wins
            mllog_line(2000, "init_stop"),
            mllog_line(2001, "run_start", prefix="0: "),
            mllog_line(
                3000, "eval_accuracy", 5.9, prefix="12: ", epoch_num=0.1, samples_count=288000
            ),
            mllog_line(4000, "eval_accuracy", 5.55, samples_count=307200),
            "+ ret_code=0",
            mllog_line(5000, "run_stop", prefix=" 0: ", status="success", samples_count=307200),
        ]
    )
    assert log.formats == {"mllog"} and log.problems == []
    assert log.events[0].time_s == 1.0
    assert log.events[-1].metadata == {
        "status": "success",
        "samples_count": 307200,
    }  # file/lineno dropped
    s = summarize(log, require_init_stop_before_run_start=True, higher_is_better=False)
    assert s.success and s.run_start == 2.001 and s.run_stop == 5.0
    assert s.time_to_train_s == pytest.approx(2.999)
    assert s.eval_x == "samples" and s.eval_curve == [(288000.0, 5.9), (307200.0, 5.55)]
    assert s.quality_target == 5.6 and s.seed == 6808
    assert s.hyperparameters == {"global_batch_size": 960, "opt_base_learning_rate": 6.6e-05}
    assert s.submission == {
        "benchmark": "llama31_405b",
        "org": "NVIDIA",
        "division": "closed",
        "status": "onprem",
        "platform": "640xNVIDIA GB200",
    }


def test_mllog_bad_records_are_problems():
    log = parse_lines(
        [
            ':::MLLOG {"namespace": "", "time_ms": 17',
            ':::MLLOG {"key": "run_start", "value": null}',
            ':::MLLOG ["not", "a", "record"]',
            mllog_line(1000, "run_start") + "   trailing junk",
        ]
    )
    assert [line for line, _ in log.problems] == [1, 2, 3]
    assert keys(log) == ["run_start"] and log.events[0].line == 4


def test_detect_picks_format_per_line():
    assert detect('x :::MLLOG {"a": 1}')[0] is mllog
    assert detect(":::MLL 1.0 run_start: {}")[0] is mll
    assert detect("plain text") is None


# --- Alibaba v0.6 -----------------------------------------------------------------------------------------


def test_alibaba_format_utc_seconds_percent_and_worker_repeats():
    start = calendar.timegm((2019, 6, 13, 0, 30, 56, 0, 0, 0))
    lines = (
        ["MLPerf: resnet [06/13/19 00:30:56], run_start"] * 12
        + [
            "MLPerf: resnet [06/13/19 00:30:57], run_set_random_seed:2019",
            "MLPerf: resnet [06/13/19 00:30:57], run_start",  # a slower worker, later second: first one wins
            'MLPerf: resnet [06/13/19 00:30:58], opt_learning_rate: {"value": 25.000000}',
            'MLPerf: resnet [06/13/19 00:50:31], eval_accuracy: {"value": 70.46000%, "epoch": 63}',
            "MLPerf: resnet [06/13/19 04:46:52]MLPerf: resnet [06/13/19 04:46:52], run_start, input_random_flip: true",
            ", input_resize: [224, 224]",
            'MLPerf: resnet [06/13/19 00:55:21], eval_accuracy: {"value": 75.98000%, "epoch": 79}',
            "MLPerf: resnet [06/13/19 00:55:21], run_stop",
            "MLPerf: resnet [06/13/19 00:55:21], Total runtime: 24.409763 minutes",
        ]
    )
    log = parse_lines(lines)
    assert log.formats == {"alibaba"}
    assert [line for line, _ in log.problems] == [17]
    assert keys(log).count("run_start") == 2
    s = summarize(log)
    assert s.run_start == start and s.time_to_train_s == 1465.0
    assert s.status is None and s.success
    assert s.eval_curve == [(63.0, 0.7046), (79.0, 0.7598)] and s.seed == 2019
    assert s.submission["benchmark"] == "resnet"
    assert summarize(log, quality_target=0.759).success
    assert not summarize(log, quality_target=0.76).success


# --- failure reasons --------------------------------------------------------------------------------------


def test_missing_run_start():
    s = summarize(parse_lines(["noise", mll_line(5.0, "run_stop", status="success")]))
    assert not s.success and s.failure_reason == "run_start is missing (line count 2)"
    assert s.time_to_train_s is None and s.run_stop == 5.0


def test_missing_run_stop_reports_line_count():
    s = summarize(parse_lines([mll_line(1.0, "run_start"), "a", "b"]))
    assert s.failure_reason == "run_stop is missing (line count 3)" and s.time_to_train_s is None


def test_run_stop_before_run_start():
    s = summarize(
        parse_lines([mll_line(9.0, "run_start"), mll_line(4.0, "run_stop", status="success")])
    )
    assert not s.success
    assert s.failure_reason == "run_stop at line 2 comes before run_start at line 1"
    assert s.time_to_train_s == -5.0


def test_run_start_before_init_stop_only_when_required():
    lines = (
        ["x"] * 18
        + [mll_line(10.0, "run_start")]
        + ["y"] * 5
        + [mll_line(11.0, "init_stop"), mll_line(20.0, "run_stop", status="success")]
    )
    log = parse_lines(lines)
    assert summarize(log).success
    s = summarize(log, require_init_stop_before_run_start=True)
    assert s.failure_reason == "run_start at line 19 comes before init_stop at line 25"
    no_init = parse_lines(
        [mll_line(10.0, "run_start"), mll_line(20.0, "run_stop", status="success")]
    )
    assert (
        "init_stop is missing"
        in summarize(no_init, require_init_stop_before_run_start=True).failure_reason
    )


def test_first_run_start_and_last_run_stop_win():
    log = parse_lines(
        [
            mll_line(1.0, "run_start"),
            mll_line(2.0, "run_start"),
            mll_line(3.0, "run_stop", status="aborted"),
            mll_line(4.0, "run_stop", status="success"),
        ]
    )
    s = summarize(log)
    assert s.success and s.run_start == 1.0 and s.run_stop == 4.0 and s.first_line["run_stop"] == 4


def test_empty_log():
    s = summarize(parse_lines([]))
    assert not s.success and s.failure_reason == "run_start is missing (line count 0)"
    assert s.eval_curve == [] and s.submission["org"] == ""


# --- input handling ---------------------------------------------------------------------------------------


def test_parse_lines_accepts_bytes_text_and_whole_strings():
    a = parse_lines(
        [mll_line(1.0, "run_start").encode(), mll_line(2.0, "run_stop", status="success") + "\r\n"]
    )
    b = parse_lines(
        mll_line(1.0, "run_start") + "\n" + mll_line(2.0, "run_stop", status="success") + "\n"
    )
    assert keys(a) == keys(b) == ["run_start", "run_stop"]
    assert isinstance(a, ParsedLog) and isinstance(a.events[0], Event)


def test_parse_file_skips_overlong_lines_without_losing_the_rest(tmp_path):
    path = tmp_path / "result_0.txt"
    big = ':::MLLOG {"key": "x", "value": "' + "a" * 50_000 + '", "time_ms": 1}'
    path.write_bytes(
        b"\n".join(
            [
                mllog_line(1000, "run_start").encode(),
                big.encode(),
                b"",
                mllog_line(9000, "run_stop", status="success").encode(),
            ]
        )
    )  # no final newline
    log = parse_file(path, max_line_bytes=1000)
    assert log.line_count == 4 and keys(log) == ["run_start", "run_stop"]
    assert log.problems == [(2, "line longer than 1000 bytes skipped")]
    assert summarize(log).time_to_train_s == 8.0
    assert keys(parse_file(path)) == ["run_start", "x", "run_stop"]  # within the default limit


def test_parse_file_binary_garbage_and_bad_utf8(tmp_path):
    path = tmp_path / "result_1.txt"
    path.write_bytes(
        b"\x00\x00\x00\x00\n\xff\xfe garbage \x80\n"
        + mll_line(1.0, "run_start").encode()
        + b"\r\n"
        + b':::MLL 2.0 submission_org: {"value": "Caf\xe9", "metadata": {}}\n'
        + mll_line(3.0, "run_stop", status="success").encode()
        + b"\n"
    )
    log = parse_file(path)
    assert log.problems == [(1, "line contains NUL bytes (binary data?)")]
    assert keys(log) == ["run_start", "submission_org", "run_stop"]
    assert log.events[1].value == "Caf\ufffd"
    assert summarize(log).success


def test_problem_list_is_bounded():
    log = parse_lines([":::MLL garbage"] * (MAX_PROBLEMS + 50))
    assert len(log.problems) == MAX_PROBLEMS + 1
    assert log.problems[-1] == (MAX_PROBLEMS + 50, "50 more problems not listed")
    assert log.events == [] and log.formats == set()


def test_decoded_values_stay_json_storable():
    log = parse_lines(
        [
            v05(1, "input_resize", "(224, 224)"),
            v05(2, "odd", "{1, 2}"),
            v05(3, "cplx", "1+2j"),
            v05(4, "shape", "[4, 224, 224] -> (64, 112.0, 112.0)"),
            v05(5, "bad_escape", '"\\d"'),
        ]
    )
    assert [e.value for e in log.events] == [
        [224, 224],
        [1, 2],
        "1+2j",
        "[4, 224, 224] -> (64, 112.0, 112.0)",
        "\\d",
    ]  # Python keeps the unknown escape, without a warning
    json.dumps([e.value for e in log.events])


# --- parse_file reads blocks: where they end must not show ------------------------------------------------


def file_lines(data: bytes) -> list:
    """The lines parse_file sees: split at LF only, each keeping its LF."""
    parts = data.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def parsed(log):
    return log.events, sorted(log.formats), log.line_count, log.problems


def line_by_line(lines: list) -> ParsedLog:
    """What the parser means, written plainly for bytes lines as parse_file gives them: each line on its own, read
    in the last format when it holds that format's marker (a log sticks to one), else in the format detect finds.
    The parser jumps over noise with searches of whole blocks; it must agree."""
    from submissions.checking.logs.parse import _DECODE_ERRORS, _Repeats

    log, repeats, fmt = ParsedLog(), _Repeats(), None
    for n, raw in enumerate(lines, 1):
        if b"\x00" in raw:
            log.problems.append((n, "line contains NUL bytes (binary data?)"))
            raw = raw.replace(b"\x00", b"")
        text = raw.decode("utf-8", "replace")
        at = text.find(fmt.MARKER) if fmt is not None else -1
        if at >= 0:
            rest = text[at + len(fmt.MARKER) :]
        elif (found := detect(text)) is not None:
            fmt, rest = found
        else:
            continue
        try:
            key, value, time_s, metadata = fmt.parse(rest)
        except _DECODE_ERRORS as exc:
            log.problems.append((n, f"cannot decode {fmt.NAME} line: {exc}"[:300]))
            continue
        log.formats.add(fmt.NAME)
        if not repeats.is_repeat(key, value, time_s):
            log.events.append(Event(key, value, time_s, n, metadata))
    log.line_count = len(lines)
    return log


def parse_in_blocks(monkeypatch, path, sizes=(1, 2, 3, 7, 16, 100, 1 << 20), **kwargs):
    """parse_file with each block size, checked to give one result, which is returned."""
    results = []
    for size in sizes:
        monkeypatch.setattr(log_parser, "BLOCK_SIZE", size)
        results.append(parse_file(path, **kwargs))
    for log in results[1:]:
        assert parsed(log) == parsed(results[0])
    return results[0]


def test_parse_file_blocks_split_marker_lines_anywhere(tmp_path, monkeypatch):
    lines = [
        b"noise before",
        mllog_line(1000, "run_start").encode(),
        b"12:34:56 chatter ::",
        mllog_line(1500, "submission_org", "Caf\u00e9 \u20ac", prefix=" 12: ").encode()
        + b"\r",  # CRLF
        b"progress 10%\rprogress 20%\r"
        + mllog_line(1600, "eval_accuracy", 0.5, samples_count=64).encode(),
        mllog_line(1600, "eval_accuracy", 0.5, samples_count=64).encode(),  # repeat: dropped
        mll_line(2.0, "init_stop").encode(),  # the format sticks to MLL ...
        b"chatter",
        b"x ::: y "
        + mllog_line(2500, "odd").encode()
        + b" "
        + mll_line(2.5, "run_stop", status="x").encode(),
        b"\xff\xfe not utf-8 " + mllog_line(3000, "tracked_stats", {"throughput": 2.5}).encode(),
        b"MLPerf: resnet [06/13/19 00:30:56], run_start",
        b'MLPerf: resnet [06/13/19 00:30:58], eval_accuracy: {"value": 75.98000%, "epoch": 79}',
        b":::MLL 15608[2019-06-18 10:02:47] cut short",
        mllog_line(5000, "run_stop", status="success").encode(),  # the last line has no newline
    ]
    data = b"\n".join(lines)
    path = tmp_path / "result_0.txt"
    path.write_bytes(data)
    log = parse_in_blocks(monkeypatch, path)
    assert (
        parsed(log)
        == parsed(line_by_line(file_lines(data)))
        == parsed(parse_lines(file_lines(data)))
    )
    assert log.line_count == 14 and log.formats == {"mllog", "mll", "alibaba"}
    assert [(e.key, e.line) for e in log.events] == [
        ("run_start", 2),
        ("submission_org", 4),
        ("eval_accuracy", 5),
        ("init_stop", 7),
        ("run_stop", 9),
        ("tracked_stats", 10),
        ("run_start", 11),
        ("eval_accuracy", 12),
        ("run_stop", 14),
    ]
    assert log.events[1].value == "Caf\u00e9 \u20ac" and log.events[4].metadata == {
        "status": "x"
    }  # ... here too
    assert log.problems == [(13, "cannot decode mll line: malformed :::MLL line (no `key:`)")]
    monkeypatch.setattr(log_parser, "BLOCK_SIZE", 5)
    path.write_bytes(data + b"\n")
    assert parsed(parse_file(path)) == parsed(log)


def test_parse_file_overlong_lines_spanning_blocks(tmp_path, monkeypatch):
    path = tmp_path / "result_1.txt"
    big = mllog_line(2000, "x", "a" * 5000).encode()
    path.write_bytes(
        b"\n".join(
            [
                mllog_line(1000, "run_start").encode(),
                b"noise " * 2000,
                big,
                b"",
                mllog_line(9000, "run_stop", status="success").encode(),
                big,
            ]
        )
    )  # the last one without a newline
    log = parse_in_blocks(
        monkeypatch, path, sizes=(7, 64, 999, 1000, 1001, 4096, 1 << 20), max_line_bytes=1000
    )
    assert [(e.key, e.line) for e in log.events] == [("run_start", 1), ("run_stop", 5)]
    assert log.line_count == 6
    assert log.problems == [(n, "line longer than 1000 bytes skipped") for n in (2, 3, 6)]


def test_parse_file_line_limit_is_exact(tmp_path, monkeypatch):
    path = tmp_path / "result_2.txt"
    line = mllog_line(1000, "run_start").encode()
    limit = len(line)
    for tail in (b"\n", b""):
        path.write_bytes(
            b"\n".join([line, line + b" ", line.replace(b", ", b",\x00", 1), line + b"  "]) + tail
        )
        log = parse_in_blocks(
            monkeypatch, path, sizes=(1, limit - 1, limit, limit + 1, 1 << 20), max_line_bytes=limit
        )
        assert [e.line for e in log.events] == [
            1
        ]  # equal times and values: the NUL line repeats line 1
        too_long = f"line longer than {limit} bytes skipped"
        assert log.problems == [
            (2, too_long),
            (3, "line contains NUL bytes (binary data?)"),
            (4, too_long),
        ]
        assert log.line_count == 4


def test_parse_file_edges_of_files(tmp_path, monkeypatch):
    path = tmp_path / "result_3.txt"
    for data, count in [
        (b"", 0),
        (b"\n", 1),
        (b"\n\n", 2),
        (b"x", 1),
        (b"\r\n\r", 2),
        (b"a\rb\rc", 1),
        (b"\x00", 1),
        (b"ok\n\x00\x00", 2),
    ]:
        path.write_bytes(data)
        log = parse_in_blocks(monkeypatch, path, sizes=(1, 2, 1 << 20))
        assert log.line_count == count and log.events == []
        assert (
            parsed(log)
            == parsed(line_by_line(file_lines(data)))
            == parsed(parse_lines(file_lines(data)))
        )
    path.write_bytes(
        b"noise\n\x00" + mll_line(1.0, "run_start").encode() + b"\r\nmore \x00noise\r\n"
    )
    log = parse_in_blocks(monkeypatch, path)
    assert [(e.key, e.line) for e in log.events] == [("run_start", 2)] and log.line_count == 3
    assert log.problems == [(n, "line contains NUL bytes (binary data?)") for n in (2, 3)]


def test_random_files_of_quirky_lines_parse_as_line_by_line(tmp_path):
    import random

    rnd = random.Random(11)
    pieces = [
        mllog_line(1000, "run_start"),
        mllog_line(1000, "run_start", prefix=" 0: "),
        mll_line(2.0, "init_stop"),
        v05(1, "run_start"),
        v05(1, "eval_accuracy", '{"value": 0.1, "epoch": 1}'),
        mllog_line(1500, "k", 1)[:-9],
        "MLPerf: resnet [06/13/19 00:30:56], run_start",
        ":::MLL 15608[2019 cut",
        "noise",
        "",
        "x ::: y",
        ":::",
        "MLPerf: ",
        "caf\u00e9 \x00 ::",
    ]
    path = tmp_path / "result_5.txt"
    for _ in range(300):
        lines = [
            rnd.choice(pieces) + rnd.choice(["", " :::", "\r", " MLPerf: x", "\x00"])
            for _ in range(rnd.randint(0, 15))
        ]
        data = "\n".join(lines).encode() + rnd.choice([b"", b"\n"])
        path.write_bytes(data)
        want = parsed(line_by_line(file_lines(data)))
        assert parsed(parse_file(path)) == want == parsed(parse_lines(file_lines(data))), data
        assert parsed(parse_lines(data.decode().splitlines())) == parsed(
            parse_lines(data.splitlines())
        )


def test_parse_file_memory_stays_bounded_for_a_giant_line(tmp_path, monkeypatch):
    path = tmp_path / "result_4.txt"
    with open(path, "wb") as f:
        f.write(mllog_line(1000, "run_start").encode() + b"\n")
        for _ in range(64):
            f.write(b"y" * (1 << 16))  # one 4 MiB line
        f.write(b"\n" + mllog_line(2000, "run_stop", status="success").encode() + b"\n")
    monkeypatch.setattr(log_parser, "BLOCK_SIZE", 1 << 16)
    tracemalloc.start()
    try:
        log = parse_file(path, max_line_bytes=100_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert [(e.key, e.line) for e in log.events] == [("run_start", 1), ("run_stop", 3)]
    assert log.problems == [(2, "line longer than 100000 bytes skipped")] and log.line_count == 3


@pytest.mark.parametrize(
    "record",
    [
        '{"time_ms": 1000, "key": "k", "value": NaN, "metadata": {}}',  # json reads NaN; msgspec refuses it
        '{"time_ms": 1000, "key": "k", "value": 1e400, "metadata": {}}',  # inf
        '{"time_ms": 1000, "key": "k", "value": 123456789012345678901234567890, "metadata": {}}',
        '{"time_ms": 1000, "key": "k", "value": "\\ud800", "metadata": {}}',  # a lone surrogate
        '{"time_ms": 1000, "key": "k", "value": 1, "metadata": {}} trailing words',
        '  {"time_ms": 1000, "key": "k", "value": [1.5, {"a": null}], "metadata": {"lineno": 3}}  ',
    ],
)
def test_mllog_records_decode_as_the_json_module_decodes_them(record):
    """The fast decoder gives way to json's wherever the two could disagree."""
    key, value, time_s, metadata, decoded, start, end = mllog.parse_record(record)
    expected, end_json = json.JSONDecoder().raw_decode(record, record.index("{"))
    assert repr(decoded) == repr(expected) and (start, end) == (record.index("{"), end_json)
    assert (key, time_s, repr(value)) == ("k", 1.0, repr(expected["value"]))


@pytest.mark.parametrize(
    "text",
    [
        '{"value": NaN}',
        "1e400",
        "123456789012345678901234567890",
        '"\\ud800"',
        '{"a": 1} x',
        "  ",
        "",
        '{"a": 1, "a": 2}',
        ' {"v": [1.5, -0.0, 2.5e-320, true, null, "\\u00e9"]} ',
        "[1, 2",
        "1.0000000000000002",
    ],
)
def test_mllog_loads_is_json_loads(text):
    """What the RCP reader decodes goes through mllog.loads: the same value or the same error as json.loads."""

    def outcome(loads):
        try:
            return repr(loads(text))
        except ValueError as error:
            return type(error).__name__, str(error)

    assert outcome(mllog.loads) == outcome(json.loads)


def test_count_lf_counts_as_bytes_count():
    import random

    from ...conftest import c_scanner

    count_lf = c_scanner().count_lf  # without the scanner, logs.count_lf is bytes.count itself
    rnd = random.Random(5)
    for size in (0, 1, 2, 255, 256, 4097, 1 << 16):
        data = bytes(rnd.choice(b"ab\n\r\x00") for _ in range(size))
        assert (
            count_lf(data)
            == data.count(b"\n")
            == count_lf(memoryview(data))
            == count_lf(bytearray(data))
        )


def test_repeats_are_judged_alike_when_unread_events_are_left_out():
    import random

    from submissions.checking.logs.parse import _Repeats

    # (kept?, key, value, time): unread events between two equal events of one timestamp, or starting another
    cases = [
        [(1, "a", 1, 1.0), (0, "t", {}, 1.0), (1, "a", 1, 1.0)],
        [(1, "a", 1, 1.0), (0, "t", {}, 2.0), (1, "a", 1, 1.0)],
        [(1, "a", 1, 1.0), (0, "t", {}, 2.0), (0, "t", {}, 1.0), (1, "a", 1, 1.0)],
        [
            (0, "t", {}, 1.0),
            (1, "a", 1, 1.0),
            (1, "a", 1, 1.0),
            (1, "b", [1], 1.0),
            (1, "b", [1], 1.0),
        ],
    ]
    rnd = random.Random(7)
    for _ in range(500):  # an unread event is of a key no kept event has
        kept = [rnd.random() < 0.5 for _ in range(12)]
        cases.append(
            [(k, rnd.choice("ab") if k else "t", 1, rnd.choice([1.0, 2.0, 3.0])) for k in kept]
        )
    for events in cases:
        every, lean = _Repeats(), _Repeats()
        want = []
        for kept, k, v, t in events:
            repeat = every.is_repeat(k, v, t)
            if kept:
                want.append(repeat)
        got, unread = [], []  # the unread events since the last kept one, given to skip together
        for kept, k, v, t in events:
            if kept:
                if unread:
                    lean.skip(unread)
                    unread = []
                got.append(lean.is_repeat(k, v, t))
            else:
                unread.append(t)
        assert got == want, events
